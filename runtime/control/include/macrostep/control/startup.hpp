// Start-up procedures (METHODS §6.5; seed 000 §3.4 and §5.1, Listing 5.1; D-32, D-34).
#pragma once

#include <cstddef>

namespace macrostep::control {

// Variable-step start (seed 000 §3.4, D-32): the run starts with H_init and κ = 0; during the
// initial phase each accepted step doubles H and raises κ by one. The phase ends when κ_max
// is reached, an error test (or corrector) fails, or the normal controllers ask to reduce κ
// or H (κ_new < κ or r < 1); from then on the normal values are used.
class VariableStartPhase {
 public:
  explicit VariableStartPhase(bool enabled = true) : active_(enabled) {}
  bool active() const { return active_; }

  struct Decision {
    int kappa;      // degree of the next step
    double r;       // step factor of the next step (2 while the phase goes on)
    bool in_phase;  // the phase is still running after this decision
  };

  // After an accepted step of degree κ, with the normally computed κ_new and limited r
  // (Listing 3.3, N_fail = 0), κ_max and the history points n_hist at T_M:
  // if the phase is not active → (κ_new, r); if κ_new < κ or r < 1 → the phase ends with
  // (κ_new, r); otherwise → (min(κ+1, κ_max, n_hist − 1), 2), and the phase ends once
  // that degree equals κ_max.
  Decision after_accepted_step(int kappa, int kappa_new, double r, int kappa_max,
                               std::size_t history_points);
  // A failed error test or corrector ends the phase.
  void after_failed_step() { active_ = false; }

 private:
  bool active_;
};

// Listing 5.1 (fixed H) with D-34: the end point T_{N+1} of the step starting at t_n,
// n_steps = accepted macro steps so far (nMacSteps), time measured from t0 (T_0 = 0 in D-34):
//   if t_n − t0 < 2H:  H_red = 1e-5·H·2^{n_steps}; T_{N+1} = t_n + H_red, and if that
//                      tentative end lies beyond t0 + 2H, T_{N+1} = t0 + 2H
//   else:              T_{N+1} = t_n + H, computed drift-free as the next point of the grid
//                      t0 + 2H + k·H (the nearest grid point to t_n is taken as T_N; a t_n
//                      between grid points, a macro point on a subsystem's time event, goes
//                      on to the next one).
// So the ramp doubles H_red from 1e-5·H until T reaches exactly 2H (18 steps), then H.
// Reading of the listing: its outer test uses the current end point (T_N), its inner test the
// tentative T_N + H_red, which is what the prose "until T_N + H_red > 2H" describes.
double fixed_step_ramp_end(double t_n, double h, long n_steps, double t0 = 0.0);

// The fixed-H step without the ramp: the next point of the grid t0 + k·H after t_n (t_n on the
// grid up to rounding, or between two of its points).
double fixed_step_grid_end(double t_n, double h, double t0 = 0.0);

// Whether t (>= t0) is a point t0 + k·H of that grid, up to the rounding the two functions above
// allow (not a macro point between two of its points).
bool fixed_step_grid_point(double t, double h, double t0 = 0.0);

}  // namespace macrostep::control
