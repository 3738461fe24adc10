// The factorised interface Jacobian of the matrix-based strategies (newton_matrix.hpp;
// METHODS.md §4.1, §4.2).
#include "macrostep/corrector/newton_matrix.hpp"

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

void NewtonMatrix::newton_step(std::span<double> residual, std::span<double> s) {
  jacobian_.solve(residual);  // J d = −g
  for (std::size_t k = 0; k < s.size(); ++k) s[k] += residual[k];
}

bool NewtonMatrix::finite_difference_iterate(const PassView& pass, std::span<double> residual,
                                             std::span<double> s, bool& evaluated) {
  evaluated = false;
  if (pass.perturbed) {
    set_forward_differences(pass);
    evaluated = true;
    if (!assemble(pass)) return false;
  } else if (!valid_) {
    return false;
  }
  newton_step(residual, s);
  return true;
}

}  // namespace macrostep::corrector
