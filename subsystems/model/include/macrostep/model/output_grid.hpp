// The output grid of a run's result rows: the times t_k = k·Δ, k = 0, 1, ... (Δ the
// configuration's output_interval). A subsystem's integrator samples its outputs at the grid
// times strictly inside each macro step (ida::Integrator::set_output_grid), and the master writes
// those samples and the macro points that fall on the grid as rows. Both sides decide with these
// functions which grid times a step holds, so that they agree to the index.
#pragma once

#include <cstdint>
#include <optional>

namespace macrostep::model {

// Grid indices first..last (empty when first > last).
struct GridRange {
  std::int64_t first = 0;
  std::int64_t last = -1;
  bool empty() const { return first > last; }
  std::int64_t size() const { return empty() ? 0 : last - first + 1; }
};

// A grid time within this fraction of Δ of a macro point is that macro point's (not inside the
// step): rounding of the macro times never creates or loses a row.
inline constexpr double kGridTolerance = 1e-9;

// The grid time k·Δ.
inline double grid_time(std::int64_t k, double interval) {
  return static_cast<double>(k) * interval;
}

// The grid times strictly inside (t0, t1): k·Δ > t0 + tol and k·Δ < t1 − tol, tol =
// kGridTolerance·Δ. interval > 0, t0 < t1.
GridRange grid_inside(double t0, double t1, double interval);

// The grid index of t when t is within kGridTolerance·Δ of a grid time, else nullopt.
std::optional<std::int64_t> grid_index_at(double t, double interval);

}  // namespace macrostep::model
