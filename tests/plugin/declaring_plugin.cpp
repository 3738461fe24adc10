// A plugin for the tests of what plugins declare (test_plugin_checks.cpp): an oscillator
// x' = v, v' = -x + force (states "x", "v", outputs x and v, input "force") plus `states` - 2
// decaying states s' = -s, whose declarations the parameters can spoil:
//   states         the state count (default 2), built with a valid pattern and names;
//   declared_states  what state_size() says instead (nothing is built for it);
//   column_start, row_index   the Jacobian pattern instead of the valid one;
//   roles          how many state roles state_roles() returns;
//   output_names, input_names   the names instead of "x", "v" and "force";
//   output_pattern the rows and columns of ∂y/∂z ([[rows], [columns]]) instead of the identity;
//   nan_from       from this time on the residual's r[1] is NaN;
//   throw          "int": the constructor throws 42; "names": output_name() throws;
//                  "initial_state": initial_state() throws;
//   initial_time   what initial_time() returns (default 0);
//   wrong          one analytic Jacobian gets one mistake (the loader's Jacobian check):
//                  "sign" dF/dz's entry (v, x) is -1 for 1, "cj" dF/dz' of v is 3·cj for cj,
//                  "output" dy/dz is 2 for 1, "input" dF/du is +1 for -1, "outside" the residual
//                  of the decaying state s2 also takes 0.5·x, outside the pattern;
//   kink           the residual of v takes |x - 0.1| + 0.1 for x (a kink at the initial
//                  x = 0.1, where central differences give 0) and jacobian() its derivative,
//                  the right one (1) at the kink.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "macrostep/plugin/plugin_api.hpp"

namespace {

using macrostep::model::EntryPattern;
using macrostep::model::SparsityPattern;
using macrostep::model::StateRole;

class Declaring final : public macrostep::model::Subsystem {
 public:
  explicit Declaring(const std::string& parameters_json) {
    const auto p = nlohmann::json::parse(parameters_json);
    if (p.value("throw", std::string()) == "int") throw 42;  // not a std::exception
    names_throw_ = p.value("throw", std::string()) == "names";
    initial_throws_ = p.value("throw", std::string()) == "initial_state";
    initial_time_ = p.value("initial_time", 0.0);
    wrong_ = p.value("wrong", std::string());
    kink_ = p.value("kink", false);
    n_ = p.value("states", std::size_t{2});
    if (n_ < 2) throw std::invalid_argument("\"states\" must be >= 2");
    declared_ = p.value("declared_states", n_);
    if (wrong_ == "outside" && n_ < 3) throw std::invalid_argument("\"outside\" needs states >= 3");
    nan_from_ = p.value("nan_from", std::numeric_limits<double>::infinity());
    output_names_ = p.value("output_names", std::vector<std::string>{"x", "v"});
    input_names_ = p.value("input_names", std::vector<std::string>{"force"});
    if (p.contains("output_pattern")) {
      output_pattern_.row = p["output_pattern"][0].get<std::vector<std::size_t>>();
      output_pattern_.column = p["output_pattern"][1].get<std::vector<std::size_t>>();
    }
    pattern_.n = n_;
    pattern_.column_start = {0, 2, 4};
    pattern_.row_index = {0, 1, 0, 1};
    for (std::size_t i = 2; i < n_; ++i) {
      pattern_.row_index.push_back(static_cast<std::int64_t>(i));
      pattern_.column_start.push_back(static_cast<std::int64_t>(pattern_.row_index.size()));
    }
    if (p.contains("column_start")) {
      pattern_.column_start = p["column_start"].get<std::vector<std::int64_t>>();
    }
    if (p.contains("row_index"))
      pattern_.row_index = p["row_index"].get<std::vector<std::int64_t>>();
    roles_.assign(n_, StateRole::kOther);
    roles_[0] = StateRole::kPosition;
    roles_[1] = StateRole::kVelocity;
    roles_.resize(p.value("roles", n_), StateRole::kOther);
  }

  std::size_t state_size() const override { return declared_; }
  std::size_t input_size() const override { return input_names_.size(); }
  std::size_t output_size() const override { return output_names_.size(); }
  std::span<const StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override {
    if (i < 2) return i == 0 ? "x" : "v";
    std::string name = std::to_string(i);
    return name.insert(0, 1, 's');
  }
  std::string output_name(std::size_t i) const override {
    if (names_throw_) throw std::runtime_error("output_name failed");
    return output_names_.at(i);
  }
  std::string input_name(std::size_t i) const override { return input_names_.at(i); }
  double initial_time() const override { return initial_time_; }

  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    if (initial_throws_) throw std::runtime_error("no initial state for these parameters");
    for (std::size_t i = 0; i < n_; ++i) z0[i] = zp0[i] = 0.0;
    z0[0] = 0.1;
    zp0[1] = -0.1 + u0[0];
    for (std::size_t i = 2; i < n_; ++i) {
      z0[i] = 1.0;
      zp0[i] = -1.0;
    }
    if (wrong_ == "outside") zp0[2] -= 0.05;
  }

  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    const double x = kink_ ? std::fabs(z[0] - 0.1) + 0.1 : z[0];
    r[1] = t >= nan_from_ ? std::numeric_limits<double>::quiet_NaN() : zp[1] + x - u[0];
    for (std::size_t i = 2; i < n_; ++i) r[i] = zp[i] + z[i];
    if (wrong_ == "outside") r[2] += 0.5 * z[0];
  }

  const SparsityPattern& jacobian_pattern() const override { return pattern_; }

  void jacobian(double, std::span<const double> z, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;
    values[1] = wrong_ == "sign" || (kink_ && z[0] < 0.1) ? -1.0 : 1.0;
    values[2] = -1.0;
    values[3] = wrong_ == "cj" ? 3.0 * cj : cj;
    for (std::size_t i = 4; i < values.size(); ++i) values[i] = cj + 1.0;
  }

  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    for (std::size_t o = 0; o < y.size(); ++o) y[o] = z[o % 2];
  }

  EntryPattern output_jacobian_pattern() const override {
    if (!output_pattern_.row.empty()) return output_pattern_;
    EntryPattern p;
    for (std::size_t o = 0; o < output_size(); ++o) {
      p.row.push_back(o);
      p.column.push_back(o % 2);
    }
    return p;
  }
  void output_jacobian(double, std::span<const double>, std::span<const double>,
                       std::span<double> values) const override {
    for (double& v : values) v = wrong_ == "output" ? 2.0 : 1.0;
  }
  EntryPattern input_jacobian_pattern() const override { return {{1}, {0}}; }
  void input_jacobian(double, std::span<const double>, std::span<const double>,
                      std::span<const double>, std::span<double> values) const override {
    values[0] = wrong_ == "input" ? 1.0 : -1.0;
  }

 private:
  std::size_t n_ = 2, declared_ = 2;
  double nan_from_ = 0.0;
  std::vector<std::string> output_names_, input_names_;
  bool names_throw_ = false, initial_throws_ = false, kink_ = false;
  double initial_time_ = 0.0;
  std::string wrong_;
  EntryPattern output_pattern_;
  SparsityPattern pattern_;
  std::vector<StateRole> roles_;
};

}  // namespace

MACROSTEP_PLUGIN(Declaring)
