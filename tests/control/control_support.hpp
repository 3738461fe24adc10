// Test helpers for the control tests: grids, histories, Gauss–Legendre quadrature.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "macrostep/coupling/history.hpp"

namespace macrostep::testing {

inline std::vector<double> random_ratios(std::size_t n, unsigned seed, double lo = 0.5,
                                         double hi = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> r(n);
  for (double& x : r) x = d(rng);
  return r;
}

// n ascending times ending at t_end with backward steps h·ratios[i].
inline std::vector<double> grid_ending_at(double t_end, double h, std::span<const double> ratios,
                                          std::size_t n) {
  std::vector<double> t(n);
  t[n - 1] = t_end;
  for (std::size_t i = n - 1; i > 0; --i) t[i - 1] = t[i] - h * ratios[(n - 1 - i) % ratios.size()];
  return t;
}

template <class F>
coupling::CouplingHistory history_from(std::span<const double> times, std::size_t channels, F f,
                                       std::size_t capacity = 16) {
  coupling::CouplingHistory h(channels, capacity);
  std::vector<double> u(channels);
  for (double t : times) {
    for (std::size_t c = 0; c < channels; ++c) u[c] = f(c, t);
    h.push(t, u);
  }
  return h;
}

// n-point Gauss–Legendre nodes and weights on [a, b] (Newton on P_n), exact for degree 2n−1.
struct Quadrature {
  std::vector<double> x, w;
};
inline Quadrature gauss_legendre(int n, double a, double b) {
  Quadrature q;
  q.x.resize(static_cast<std::size_t>(n));
  q.w.resize(static_cast<std::size_t>(n));
  const double pi = std::acos(-1.0);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(pi * (i + 0.75) / (n + 0.5));
    double dp = 0.0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1.0);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    const std::size_t k = static_cast<std::size_t>(i);
    q.x[k] = 0.5 * (a + b) - 0.5 * (b - a) * z;
    q.w[k] = (b - a) / ((1.0 - z * z) * dp * dp);
  }
  return q;
}

}  // namespace macrostep::testing
