// Test helpers of the coupling and control tests: random non-uniform macro grids, histories,
// polynomials, log-log slopes.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "macrostep/polynomials/history.hpp"

namespace macrostep::testing {

// Step-size ratios in [lo, hi] (default [0.5, 2], the controller's range of changes),
// reproducible from seed.
inline std::vector<double> random_ratios(std::size_t n, unsigned seed, double lo = 0.5,
                                         double hi = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> r(n);
  for (double& x : r) x = d(rng);
  return r;
}

// Times of n points ending at t_end, going back with steps h·ratios[i] (ascending order).
inline std::vector<double> grid_ending_at(double t_end, double h, std::span<const double> ratios,
                                          std::size_t n) {
  std::vector<double> t(n);
  t[n - 1] = t_end;
  for (std::size_t i = n - 1; i > 0; --i) t[i - 1] = t[i] - h * ratios[(n - 1 - i) % ratios.size()];
  return t;
}

// Σ c_m (t − t0)^m by Horner.
inline double poly(std::span<const double> c, double t, double t0) {
  double p = 0.0;
  for (std::size_t m = c.size(); m-- > 0;) p = p * (t - t0) + c[m];
  return p;
}

// Least-squares slope of log(y) over log(x).
inline double loglog_slope(std::span<const double> x, std::span<const double> y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// A history holding (t_i, f_c(t_i)) for every channel function f_c.
template <class F>
polynomials::CouplingHistory history_from(std::span<const double> times, std::size_t channels, F f,
                                          std::size_t capacity = 16) {
  polynomials::CouplingHistory h(channels, capacity);
  std::vector<double> u(channels);
  for (double t : times) {
    for (std::size_t c = 0; c < channels; ++c) u[c] = f(c, t);
    h.push(t, u);
  }
  return h;
}

}  // namespace macrostep::testing
