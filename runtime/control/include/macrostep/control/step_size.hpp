// Macro-step size factor (METHODS §6.2; seed 000 Eq. 3.26–3.28, Listing 3.3) and the step
// limits of D-27.
//
//   r^pos = (Γ‖ε^pos‖)^{−1/(κ+3)}, r^vel = (Γ‖ε^vel‖)^{−1/(κ+2)}, r^u = (Γ‖ε^u‖)^{−1/(κ+1)}
//   r = min(r^pos, r^vel) (concept 1) | r^u (concept 2) | r̃^u (κ_new ≠ κ, a priori)
//   Listing 3.3 limits by N_fail (consecutive failed attempts incl. the one just made):
//     N_fail = 0: r ≥ r_max → r_max; r < 1 → min(0.9, max(r_min, r)); else 1 (dead zone)
//     N_fail = 1: min(0.9, max(0.25, 0.9·r));   N_fail > 1 or corrector failure: 0.25
//   H_new = r·H, then H ≤ H_max (optional) and H ≥ H_min (1e−14·max(1, |T|); 1e−22 s near t0) or
//   abort.
#pragma once

#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/polynomials/history.hpp"

namespace macrostep::control {

struct StepSizeOptions {
  double safety = 6.0;  // Γ
  double r_min = 0.5;
  double r_max = 1.5;
  // Listing 3.3's "else r = 1.0" for 1 ≤ r < r_max. Off (the Γ study only): r is kept in
  // [1, r_max); the shrink branch r < 1 → min(0.9, max(r_min, r)) applies either way.
  bool dead_zone = true;
  double h_max = std::numeric_limits<double>::infinity();  // optional user limit

  // Throws std::invalid_argument: Γ ≤ 0, r_min not in (0, 1], r_max < 1, h_max ≤ 0 or NaN.
  void validate() const;
};

// Thrown when the step size falls below H_min (D-27): the run cannot continue.
class StepSizeUnderflow : public std::runtime_error {
 public:
  StepSizeUnderflow(double time, double step, double minimum);
  double time() const { return time_; }
  double step() const { return step_; }
  double minimum() const { return minimum_; }

 private:
  double time_;
  double step_;
  double minimum_;
};

class StepSizeController {
 public:
  explicit StepSizeController(StepSizeOptions options = {});
  const StepSizeOptions& options() const { return options_; }

  // (Γ·norm)^(−1/order) for one group, order = κ+3 (pos), κ+2 (vel), κ+1 (u).
  // norm = 0 gives r_max (D-25); a NaN or infinite norm gives 0 (the limits then apply).
  double factor(double norm, int order) const;

  // Eq. 3.27/3.28 for the a-posteriori estimate of a step of degree κ: min(r^pos, r^vel)
  // for kStates, r^u for kCouplingVariables. Throws std::invalid_argument for kNone.
  double a_posteriori_factor(const ErrorEstimate& estimate, int kappa) const;

  // r̃^u = (Γ‖ε̃^u‖)^{−1/(κ_new+1)} from the a-priori norm (Eq. 3.26/3.27).
  double a_priori_factor(double norm, int kappa_new) const { return factor(norm, kappa_new + 1); }

  // The limits of Listing 3.3 applied to a raw factor r.
  double limit(double r, int n_fail, bool corrector_failed) const;

  // H_new = min(r·H, H_max); throws StepSizeUnderflow if H_new < min_step(t).
  double next_step(double h, double r, double t) const;

  // H_min(T) = 1e−14·max(1, |T|), and 1e−22 s while |T| < 1e−8 s (D-27). Near the start a run
  // may resolve a transient far faster than its first step (a coupling variable that jumps
  // within picoseconds of t0) while a test that cannot be met still ends in tens of rejections;
  // elsewhere the floor keeps every micro step inside a macro step well above the resolution of
  // T (a macro step of a few ulp of T leaves IDA's micro steps no room to advance).
  static double min_step(double t);
  static constexpr double kMinStepStartWindow = 1e-8;

 private:
  StepSizeOptions options_;
};

// The a-priori predictor error for a step of the new degree κ from T_M to T_{M+1}
// (Eq. 3.26, D-25):
//   ε̃^u = P_{κ+1}(T_{M+1}) − P_κ(T_{M+1}) = Π_{j=1}^{κ+1} (T_{M+1} − T_{M+1−j})·u[T_M..T_{M−κ−1}]
// with P_{κ+1} through the κ+2 newest points. Needs κ+2 points (std::invalid_argument).
void a_priori_error(const polynomials::CouplingHistory& history, int kappa_new, double t_next,
                    std::span<double> eps);

// ‖ε̃^u‖ with W^u at u_M (the newest point), D-25.
double a_priori_error_norm(const polynomials::CouplingHistory& history, int kappa_new,
                           double t_next, const ErrorTolerances& tol);

}  // namespace macrostep::control
