// The factorised interface Jacobian of the matrix-based strategies (newton_matrix.hpp;
// METHODS.md §4.1, §4.2).
#include "macrostep/corrector/newton_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace macrostep::corrector {

NewtonMatrix::NewtonMatrix(const system::CoupledSystem& system)
    : system_(system), jacobian_(system), dyds_(system) {}

void NewtonMatrix::set_forward_differences(const PassView& pass) {
  for (std::size_t i = 0; i < system_.subsystem_count(); ++i) {
    const std::size_t inputs = system_.subsystem(i).input_size();
    const auto& so = pass.outcome.subsystems[i];
    perturbed_.resize(inputs);
    channel_delta_.resize(inputs);
    for (std::size_t c = 0; c < inputs; ++c) {
      perturbed_[c] = so.extra[c].outputs;
      channel_delta_[c] = system_.feed_max(i, c, pass.perturbation);
    }
    dyds_.set_forward_difference(i, so.nominal.outputs, perturbed_, channel_delta_);
  }
}

bool NewtonMatrix::assemble(const PassView& pass) {
  valid_ = jacobian_.assemble(pass.outputs, dyds_);
  h_ = pass.plan.h();
  kappa_ = pass.plan.kappa;
  return valid_;
}

// {valid, h, κ}, the sensitivities, J's values.
std::vector<std::vector<double>> NewtonMatrix::export_state() const {
  const auto values = jacobian_.values();
  const auto s = dyds_.all();
  return {{valid_ ? 1.0 : 0.0, h_, static_cast<double>(kappa_)},
          {s.begin(), s.end()},
          {values.begin(), values.end()}};
}

void NewtonMatrix::import_state(const std::vector<std::vector<double>>& state) {
  if (state.size() != 3 || state[0].size() != 3 || state[1].size() != dyds_.all().size() ||
      state[2].size() != jacobian_.nonzeros() || (state[0][0] != 0.0 && state[0][0] != 1.0)) {
    throw std::invalid_argument(
        "interface Jacobian state: the arrays do not fit this system (another layout, or "
        "damaged)");
  }
  std::copy(state[1].begin(), state[1].end(), dyds_.all().begin());
  h_ = state[0][1];
  kappa_ = static_cast<int>(state[0][2]);
  valid_ = state[0][0] == 1.0 && jacobian_.factorize(state[2]);
  if (state[0][0] == 1.0 && !valid_) {
    throw std::invalid_argument("interface Jacobian state: the kept J does not factorise");
  }
}

void NewtonMatrix::newton_step(std::span<double> residual, std::span<double> s) {
  jacobian_.solve(residual);  // J d = −g
  for (std::size_t k = 0; k < s.size(); ++k) s[k] += residual[k];
}

// Δs_L into ds_ and the feeds' perturbations into channel_delta_; returns ‖D⁻¹Δs_L‖².
double NewtonMatrix::input_change(const PassView& pass, std::size_t i,
                                  std::span<const double> s_before,
                                  std::span<const double> s_after) {
  const std::size_t inputs = system_.subsystem(i).input_size();
  ds_.assign(inputs, 0.0);
  channel_delta_.resize(inputs);
  double norm = 0.0;
  for (std::size_t c = 0; c < inputs; ++c) {
    for (const std::size_t f : system_.input_feeds(i, c)) ds_[c] += s_after[f] - s_before[f];
    channel_delta_[c] = system_.feed_max(i, c, pass.perturbation);
    norm += (ds_[c] / channel_delta_[c]) * (ds_[c] / channel_delta_[c]);
  }
  return norm;
}

// S_L Δs_L into predicted_; whether the pair contradicts block L (the trust bound).
bool NewtonMatrix::contradicts(std::size_t i, std::span<const double> y, std::span<const double> y0,
                               double trust) {
  constexpr double kRounding = 64.0 * std::numeric_limits<double>::epsilon();
  predicted_.assign(y.size(), 0.0);
  bool contradicted = false;
  for (std::size_t o = 0; o < y.size(); ++o) {
    for (std::size_t c = 0; c < ds_.size(); ++c) predicted_[o] += dyds_.at(i, o, c) * ds_[c];
    const double dy = y[o] - y0[o];
    const double scale = std::abs(dy) + std::abs(predicted_[o]);
    if (!std::isfinite(scale)) contradicted = true;
    if (scale <= kRounding * std::max(std::abs(y[o]), std::abs(y0[o]))) continue;
    if (std::abs(dy - predicted_[o]) > trust * scale) contradicted = true;
  }
  return contradicted;
}

NewtonMatrix::SecantOutcome NewtonMatrix::secant_update(
    const PassView& pass, std::span<const std::vector<double>> outputs_before,
    std::span<const double> s_before, std::span<const double> s_after, double trust) {
  const std::size_t n = system_.subsystem_count();
  for (std::size_t i = 0; i < n; ++i) {
    const double norm = input_change(pass, i, s_before, s_after);
    if (norm > 0.0 && std::isfinite(norm) &&
        contradicts(i, pass.outputs[i], outputs_before[i], trust)) {
      return {};
    }
  }
  SecantOutcome out;
  for (std::size_t i = 0; i < n; ++i) {
    const double norm = input_change(pass, i, s_before, s_after);
    if (!(norm > 0.0) || !std::isfinite(norm)) continue;
    const std::vector<double>& y = pass.outputs[i];
    const std::vector<double>& y0 = outputs_before[i];
    contradicts(i, y, y0, trust);  // predicted_ = S_L Δs_L
    for (std::size_t o = 0; o < y.size(); ++o) {
      const double miss = (y[o] - y0[o] - predicted_[o]) / norm;
      for (std::size_t c = 0; c < ds_.size(); ++c) {
        dyds_.at(i, o, c) += miss * ds_[c] / (channel_delta_[c] * channel_delta_[c]);
      }
    }
    ++out.updated;
  }
  if (out.updated > 0) out.usable = assemble(pass);
  return out;
}

bool NewtonMatrix::finite_difference_iterate(const PassView& pass, std::span<double> residual,
                                             std::span<double> s, bool& evaluated, bool step) {
  evaluated = false;
  if (pass.perturbed) {
    set_forward_differences(pass);
    evaluated = true;
    if (!assemble(pass)) return false;
  } else if (!valid_) {
    return false;
  }
  if (step) newton_step(residual, s);
  return true;
}

}  // namespace macrostep::corrector
