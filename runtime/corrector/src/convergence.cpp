// Corrector convergence test (convergence.hpp; METHODS.md §4.3, D-16; seed 000 Eq. 2.31-2.33).
#include "macrostep/corrector/convergence.hpp"

#include <cmath>
#include <stdexcept>

namespace macrostep::corrector {

ConvergenceTest::ConvergenceTest(double tau, double divergence)
    : tau_(tau), divergence_(divergence) {
  if (!(tau > 0.0) || !std::isfinite(tau)) {
    throw std::invalid_argument("corrector tolerance tau must be > 0");
  }
  if (!(divergence > 0.0 && divergence < 1.0)) {
    throw std::invalid_argument("corrector divergence threshold must be in (0, 1)");
  }
}

ConvergenceVerdict ConvergenceTest::add(double delta_norm) {
  ++count_;
  if (!std::isfinite(delta_norm)) return ConvergenceVerdict::kDiverged;
  const double previous = previous_;
  previous_ = delta_norm;
  if (count_ < 2) return ConvergenceVerdict::kContinue;  // R^1 undefined (D-16)
  // Differences this far below the tolerance are rounding: their ratio says nothing about
  // convergence (a system at rest gave R near 1 at ‖δ‖ of 1e-21..1e-12 with τ = 0.33).
  if (delta_norm <= kRoundingFraction * tau_) return ConvergenceVerdict::kConverged;
  rate_ = delta_norm / previous;  // previous = 0 < delta: R = inf, divergence
  if (!std::isfinite(rate_) || rate_ >= divergence_) return ConvergenceVerdict::kDiverged;
  return rate_ / (1.0 - rate_) * delta_norm < tau_ ? ConvergenceVerdict::kConverged
                                                   : ConvergenceVerdict::kContinue;
}

bool integrated_iterate_converged(double previous, double next, double tau, double divergence) {
  if (!(previous > 0.0) || !std::isfinite(next)) return false;
  if (next <= ConvergenceTest::kRoundingFraction * tau) return true;
  const double rate = next / previous;
  if (!(rate < divergence)) return false;
  return next / (1.0 - rate) < tau;
}

}  // namespace macrostep::corrector
