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

// Block L's change between the two passes: Δs_L, the feeds' perturbations D, ‖D⁻¹Δs_L‖², and,
// if the block moved, the change S_L Δs_L that the kept sensitivities predict.
void NewtonMatrix::measure_change(const PassView& pass, std::size_t i,
                                  std::span<const double> s_before, std::span<const double> s_after,
                                  SecantBlock& block) const {
  const std::size_t inputs = system_.subsystem(i).input_size();
  const std::size_t outputs = pass.outputs[i].size();
  block.ds.assign(inputs, 0.0);
  block.delta.resize(inputs);
  block.norm = 0.0;
  for (std::size_t c = 0; c < inputs; ++c) {
    for (const std::size_t f : system_.input_feeds(i, c)) block.ds[c] += s_after[f] - s_before[f];
    block.delta[c] = system_.feed_max(i, c, pass.perturbation);
    block.norm += (block.ds[c] / block.delta[c]) * (block.ds[c] / block.delta[c]);
  }
  if (!block.moved()) return;  // neither compared nor updated
  block.predicted.assign(outputs, 0.0);
  for (std::size_t o = 0; o < outputs; ++o) {
    for (std::size_t c = 0; c < inputs; ++c) block.predicted[o] += dyds_.at(i, o, c) * block.ds[c];
  }
}

// Whether the measured change Δy = y − y0 contradicts the predicted one (the trust bound).
bool NewtonMatrix::SecantBlock::contradicted(std::span<const double> y, std::span<const double> y0,
                                             double trust) const {
  constexpr double kRounding = 64.0 * std::numeric_limits<double>::epsilon();
  for (std::size_t o = 0; o < y.size(); ++o) {
    const double dy = y[o] - y0[o];
    const double scale = std::abs(dy) + std::abs(predicted[o]);
    if (!std::isfinite(scale)) return true;
    if (scale <= kRounding * std::max(std::abs(y[o]), std::abs(y0[o]))) continue;
    if (std::abs(dy - predicted[o]) > trust * scale) return true;
  }
  return false;
}

NewtonMatrix::SecantOutcome NewtonMatrix::secant_update(
    const PassView& pass, std::span<const std::vector<double>> outputs_before,
    std::span<const double> s_before, std::span<const double> s_after, double trust) {
  const std::size_t n = system_.subsystem_count();
  secant_blocks_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    SecantBlock& block = secant_blocks_[i];
    measure_change(pass, i, s_before, s_after, block);
    if (block.moved() && block.contradicted(pass.outputs[i], outputs_before[i], trust)) return {};
  }
  SecantOutcome out;
  for (std::size_t i = 0; i < n; ++i) {
    const SecantBlock& block = secant_blocks_[i];
    if (!block.moved()) continue;
    const std::vector<double>& y = pass.outputs[i];
    const std::vector<double>& y0 = outputs_before[i];
    for (std::size_t o = 0; o < y.size(); ++o) {
      const double miss = (y[o] - y0[o] - block.predicted[o]) / block.norm;
      for (std::size_t c = 0; c < block.ds.size(); ++c) {
        dyds_.at(i, o, c) += miss * block.ds[c] / (block.delta[c] * block.delta[c]);
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
