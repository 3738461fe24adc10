// The documented finite-difference defaults of the Subsystem's optional coupling Jacobians (and
// SubsystemView's on the base's patterns), and the derived state units.
#include "macrostep/model/subsystem.hpp"

#include "macrostep/model/names.hpp"
#include "macrostep/model/subsystem_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace macrostep::model {

namespace {

constexpr double kRelativeStep = 1e-7;

EntryPattern dense_pattern(std::size_t rows, std::size_t columns) {
  EntryPattern pattern;
  for (std::size_t c = 0; c < columns; ++c) {
    for (std::size_t r = 0; r < rows; ++r) {
      pattern.row.push_back(r);
      pattern.column.push_back(c);
    }
  }
  return pattern;
}

// Central differences of f: R^n → R^m at x, column by column, into values in the order of
// dense_pattern(m, n) (column-major).
template <class Function>
void central_differences(std::vector<double> x, std::size_t m, Function&& f,
                         std::span<double> values) {
  std::vector<double> up(m), down(m);
  for (std::size_t c = 0; c < x.size(); ++c) {
    const double x0 = x[c];
    const double h = kRelativeStep * std::max(1.0, std::fabs(x0));
    x[c] = x0 + h;
    f(x, up);
    x[c] = x0 - h;
    f(x, down);
    x[c] = x0;
    for (std::size_t r = 0; r < m; ++r) values[c * m + r] = (up[r] - down[r]) / (2.0 * h);
  }
}

// The finite-difference defaults fill the dense pattern: a caller that sized `values` for
// another pattern (a model that overrides the pattern but not the values) gets an exception
// instead of a write past its buffer.
void check_dense(std::span<const double> values, std::size_t dense, const char* what) {
  if (values.size() != dense) {
    throw std::logic_error(std::string("Subsystem::") + what + ": " +
                           std::to_string(values.size()) + " values for the dense pattern's " +
                           std::to_string(dense) +
                           "; a model that overrides the pattern overrides the values too");
  }
}

// The entries of `pattern` from the column-major dense `values` (rows × columns).
void pick(const EntryPattern& pattern, std::size_t rows, const std::vector<double>& dense,
          std::span<double> values) {
  for (std::size_t k = 0; k < pattern.nonzeros(); ++k) {
    values[k] = dense[pattern.column[k] * rows + pattern.row[k]];
  }
}

}  // namespace

void SubsystemView::output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                                    std::span<double> values) const {
  std::vector<double> dense(output_size() * state_size());
  Subsystem::output_jacobian(t, z, u, dense);
  pick(output_jacobian_pattern(), output_size(), dense, values);
}

void SubsystemView::input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                                   std::span<const double> u, std::span<double> values) const {
  std::vector<double> dense(state_size() * input_size());
  Subsystem::input_jacobian(t, z, zp, u, dense);
  pick(input_jacobian_pattern(), state_size(), dense, values);
}

EntryPattern Subsystem::output_jacobian_pattern() const {
  return dense_pattern(output_size(), state_size());
}

void Subsystem::output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                                std::span<double> values) const {
  check_dense(values, output_size() * state_size(), "output_jacobian");
  central_differences(
      std::vector<double>(z.begin(), z.end()), output_size(),
      [&](const std::vector<double>& zz, std::vector<double>& y) { outputs(t, zz, u, y); }, values);
}

void Subsystem::feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                                     std::span<double> values) const {
  central_differences(
      std::vector<double>(u.begin(), u.end()), output_size(),
      [&](const std::vector<double>& uu, std::vector<double>& y) { outputs(t, z, uu, y); }, values);
}

EntryPattern Subsystem::input_jacobian_pattern() const {
  return dense_pattern(state_size(), input_size());
}

void Subsystem::input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                               std::span<const double> u, std::span<double> values) const {
  check_dense(values, state_size() * input_size(), "input_jacobian");
  central_differences(
      std::vector<double>(u.begin(), u.end()), state_size(),
      [&](const std::vector<double>& uu, std::vector<double>& r) { residual(t, z, zp, uu, r); },
      values);
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

}  // namespace

void evaluate_outputs(const Subsystem& s, double t, std::span<const double> z,
                      std::span<const double> u, std::vector<double>& y, std::vector<double>& d) {
  y.resize(s.output_size());
  s.outputs(t, z, u, y);
  d.clear();
  if (s.has_feedthrough()) {
    d.resize(s.output_size() * s.input_size());
    s.feedthrough_jacobian(t, z, u, d);
  }
  for (std::size_t o = 0; o < y.size(); ++o) {
    if (!std::isfinite(y[o])) {
      throw std::runtime_error("output " + quoted(s.output_name(o)) + " is " + number(y[o]));
    }
  }
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (!std::isfinite(d[k])) {
      throw std::runtime_error("the derivative of output " + quoted(s.output_name(k % y.size())) +
                               " by input " + quoted(s.input_name(k / y.size())) + " is " +
                               number(d[k]));
    }
  }
}

std::vector<std::string> state_units(const Subsystem& s) {
  std::unordered_map<std::string, std::size_t> state_of;
  for (std::size_t k = 0; k < s.state_size(); ++k) state_of.emplace(s.state_name(k), k);
  std::vector<std::string> units(s.state_size());
  std::vector<bool> named(s.state_size(), false);
  for (std::size_t k = 0; k < s.state_size(); ++k) {
    units[k] = s.state_unit(k);
    named[k] = !units[k].empty();
  }
  // Per role (position, velocity): the unit of the outputs that are states of it, if one.
  std::optional<std::string> of_role[2];
  bool one_unit[2] = {true, true};
  for (std::size_t o = 0; o < s.output_size(); ++o) {
    const auto it = state_of.find(s.output_name(o));
    if (it == state_of.end()) continue;
    const std::string unit = s.output_unit(o);
    if (!named[it->second]) units[it->second] = unit;
    named[it->second] = true;
    const StateRole role = s.state_roles()[it->second];
    if (role == StateRole::kOther) continue;
    const int r = role == StateRole::kPosition ? 0 : 1;
    if (of_role[r] && *of_role[r] != unit) one_unit[r] = false;
    of_role[r] = unit;
  }
  for (std::size_t k = 0; k < s.state_size(); ++k) {
    const StateRole role = s.state_roles()[k];
    if (named[k] || role == StateRole::kOther) continue;
    const int r = role == StateRole::kPosition ? 0 : 1;
    if (one_unit[r] && of_role[r]) units[k] = *of_role[r];
  }
  return units;
}

}  // namespace macrostep::model
