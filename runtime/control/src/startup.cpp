#include "macrostep/control/startup.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace macrostep::control {

VariableStartPhase::Decision VariableStartPhase::after_accepted_step(int kappa, int kappa_new,
                                                                     double r, int kappa_max,
                                                                     std::size_t history_points) {
  if (!active_) return {kappa_new, r, false};
  if (kappa_new < kappa || r < 1.0) {
    active_ = false;
    return {kappa_new, r, false};
  }
  const int by_history = history_points == 0 ? 0 : static_cast<int>(history_points) - 1;
  const int k = std::max(0, std::min({kappa + 1, kappa_max, by_history}));
  if (k >= kappa_max) active_ = false;
  return {k, 2.0, active_};
}

namespace {

void check_fixed(double h, double t_n, double t0) {
  if (!(h > 0.0) || !std::isfinite(h)) throw std::invalid_argument("fixed step: H must be > 0");
  if (!std::isfinite(t_n) || !std::isfinite(t0) || t_n < t0) {
    throw std::invalid_argument("fixed step: T_N must be finite and not before T_0");
  }
}

// Whether q = (t − t0)/H is a whole number up to rounding: t is a grid point.
bool whole(double q) {
  return std::abs(q - std::nearbyint(q)) < 1e-6;
}

// The index of the grid point T_N stands on, (t_n − t0)/H = q up to rounding; between two grid
// points (a macro point on a subsystem's time event) the one before it.
double grid_index(double q) {
  return whole(q) ? std::nearbyint(q) : std::floor(q);
}

}  // namespace

double fixed_step_grid_end(double t_n, double h, double t0) {
  check_fixed(h, t_n, t0);
  const double k = grid_index((t_n - t0) / h);
  return t0 + (k + 1.0) * h;
}

bool fixed_step_grid_point(double t, double h, double t0) {
  check_fixed(h, t, t0);
  return whole((t - t0) / h);
}

double fixed_step_ramp_end(double t_n, double h, long n_steps, double t0) {
  check_fixed(h, t_n, t0);
  if (n_steps < 0) throw std::invalid_argument("fixed step ramp: negative step count");
  const double ramp_end = t0 + 2.0 * h;
  if (t_n < ramp_end) {
    const double h_red = 1e-5 * h * std::ldexp(1.0, static_cast<int>(std::min(n_steps, 1000L)));
    const double t_next = t_n + h_red;
    return t_next > ramp_end ? ramp_end : t_next;
  }
  const double k = grid_index((t_n - ramp_end) / h);
  return ramp_end + (k + 1.0) * h;
}

}  // namespace macrostep::control
