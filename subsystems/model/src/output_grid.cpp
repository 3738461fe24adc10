// The output grid (output_grid.hpp).
#include "macrostep/model/output_grid.hpp"

#include <cmath>

namespace macrostep::model {

GridRange grid_inside(double t0, double t1, double interval) {
  const double tol = kGridTolerance * interval;
  GridRange r;
  r.first = static_cast<std::int64_t>(std::floor((t0 + tol) / interval)) + 1;
  r.last = static_cast<std::int64_t>(std::ceil((t1 - tol) / interval)) - 1;
  // floor/ceil of quotients that round across an integer: step to the exact rule.
  while (grid_time(r.first, interval) <= t0 + tol) ++r.first;
  while (r.first > 0 && grid_time(r.first - 1, interval) > t0 + tol) --r.first;
  while (grid_time(r.last, interval) >= t1 - tol) --r.last;
  while (grid_time(r.last + 1, interval) < t1 - tol) ++r.last;
  return r;
}

std::optional<std::int64_t> grid_index_at(double t, double interval) {
  const auto k = static_cast<std::int64_t>(std::llround(t / interval));
  if (std::abs(grid_time(k, interval) - t) <= kGridTolerance * interval) return k;
  return std::nullopt;
}

}  // namespace macrostep::model
