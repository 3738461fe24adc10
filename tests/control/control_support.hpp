// Test helpers for the control tests: the grids and histories of the coupling tests, plus
// Gauss–Legendre quadrature.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <vector>

#include "../polynomials/grid_support.hpp"

namespace macrostep::testing {

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
