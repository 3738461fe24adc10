// Lagrange polynomials on non-uniform grids and divided differences (METHODS §2.1).
#include "macrostep/polynomials/lagrange.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "grid_support.hpp"

namespace mp = macrostep::polynomials;
namespace mt = macrostep::testing;

// METHODS §2.1: P_κ through κ+1 points reproduces every polynomial of degree ≤ κ, inside and
// outside the nodes (extrapolation), on random non-uniform grids.
TEST(Lagrange, ReproducesPolynomialsUpToItsDegreeOnRandomGrids) {
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> coef(-2.0, 2.0);
  for (int kappa = 0; kappa <= 6; ++kappa) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::size_t n = static_cast<std::size_t>(kappa) + 1;
      const auto ratios = mt::random_ratios(n, 100u * static_cast<unsigned>(kappa) + trial);
      const double h = 0.05;
      const auto t = mt::grid_ending_at(3.7, h, ratios, n);
      for (int degree = 0; degree <= kappa; ++degree) {
        std::vector<double> c(static_cast<std::size_t>(degree) + 1);
        for (double& x : c) x = coef(rng);
        std::vector<double> w(n);
        for (std::size_t i = 0; i < n; ++i) w[i] = mt::poly(c, t[i], 3.7);
        for (double te :
             {t.front(), 0.5 * (t.front() + t.back()), 3.7 + h, 3.7 + 2.5 * h, t.front() - h}) {
          const double expected = mt::poly(c, te, 3.7);
          EXPECT_NEAR(mp::lagrange_value(t, w, te), expected, 1e-11 * (1.0 + std::abs(expected)))
              << "kappa " << kappa << " degree " << degree << " t " << te;
        }
      }
    }
  }
}

// METHODS §2.1 / §3.1 (predicted u is O(H^{κ+1})): one-step extrapolation of a smooth function
// on a non-uniform grid whose step ratios stay fixed while H shrinks; slope κ+1 ± 0.3.
TEST(Lagrange, ExtrapolationErrorIsOrderKappaPlusOne) {
  auto f = [](double t) { return std::sin(3.0 * t) + std::exp(0.5 * t); };
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const std::size_t n = static_cast<std::size_t>(kappa) + 1;
    const auto ratios = mt::random_ratios(n, 7u + static_cast<unsigned>(kappa));
    std::vector<double> hs, errs;
    for (double h = 0.05; h > 0.003; h /= 2.0) {
      const double t_n = 1.3;
      const auto t = mt::grid_ending_at(t_n, h, ratios, n);
      std::vector<double> w(n);
      for (std::size_t i = 0; i < n; ++i) w[i] = f(t[i]);
      const double t_next = t_n + h;
      hs.push_back(h);
      errs.push_back(std::abs(mp::lagrange_value(t, w, t_next) - f(t_next)));
    }
    EXPECT_NEAR(mt::loglog_slope(hs, errs), kappa + 1.0, 0.3) << "kappa " << kappa;
  }
}

// METHODS §2.1: uniform one-step weights (−1)^i·C(κ+1, i+1) — the table printed in the spec,
// and the Lagrange basis at T_{N+1} on a uniform grid.
TEST(Lagrange, UniformExtrapolationWeights) {
  const std::vector<std::vector<double>> table = {
      {1}, {2, -1}, {3, -3, 1}, {4, -6, 4, -1}, {5, -10, 10, -5, 1}, {6, -15, 20, -15, 6, -1}};
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const std::size_t n = static_cast<std::size_t>(kappa) + 1;
    std::vector<double> w(n);
    mp::uniform_extrapolation_weights(kappa, w);
    EXPECT_EQ(w, table[static_cast<std::size_t>(kappa)]) << "kappa " << kappa;
    // Basis on T_{N−κ}..T_N (ascending) at T_N + H; weight of u_{N−i} is basis[κ−i].
    std::vector<double> nodes(n), basis(n);
    for (std::size_t m = 0; m < n; ++m) nodes[m] = 0.1 * static_cast<double>(m);
    mp::lagrange_basis(nodes, 0.1 * static_cast<double>(n), basis);
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(basis[n - 1 - i], w[i], 1e-12);
  }
}

// METHODS §2.1: ℓ_m(t_k) = δ_mk, Σℓ_m ≡ 1 (constants reproduced), ℓ ≡ 1 for κ = 0.
TEST(Lagrange, BasisIsCardinalAndSumsToOne) {
  const auto t = mt::grid_ending_at(2.0, 0.3, mt::random_ratios(6, 3), 6);
  std::vector<double> b(6);
  for (std::size_t k = 0; k < 6; ++k) {
    mp::lagrange_basis(t, t[k], b);
    for (std::size_t m = 0; m < 6; ++m) EXPECT_EQ(b[m], m == k ? 1.0 : 0.0);
  }
  mp::lagrange_basis(t, 2.45, b);
  double s = 0.0;
  for (double x : b) s += x;
  EXPECT_NEAR(s, 1.0, 1e-13);
  std::vector<double> one(1);
  mp::lagrange_basis(std::vector<double>{5.0}, 17.0, one);
  EXPECT_EQ(one[0], 1.0);  // ℓ ≡ 1 for κ = 0
}

// Divided differences: j!·w[t_0..t_j] is the j-th derivative of the interpolant, so the j-th
// difference of a degree-j polynomial is its leading coefficient, higher ones vanish, and the
// value does not depend on the order of the points.
TEST(Lagrange, DividedDifferencesOfPolynomials) {
  const std::vector<double> c = {0.3, -1.2, 0.7, 2.5};  // degree 3, leading 2.5
  const auto t = mt::grid_ending_at(1.0, 0.2, mt::random_ratios(5, 11), 5);
  std::vector<double> w(5);
  for (std::size_t i = 0; i < 5; ++i) w[i] = mt::poly(c, t[i], 0.4);
  EXPECT_NEAR(mp::divided_difference(std::span(t).subspan(1, 4), std::span(w).subspan(1, 4)), 2.5,
              1e-10);
  EXPECT_NEAR(mp::divided_difference(t, w), 0.0, 1e-9);
  EXPECT_EQ(mp::divided_difference(std::span(t).first(1), std::span(w).first(1)), w[0]);
  // w[t_a, t_b] = (w_b − w_a)/(t_b − t_a)
  EXPECT_DOUBLE_EQ(mp::divided_difference(std::span(t).first(2), std::span(w).first(2)),
                   (w[1] - w[0]) / (t[1] - t[0]));
  std::vector<double> tp = {t[3], t[0], t[2], t[1]}, wp = {w[3], w[0], w[2], w[1]};
  EXPECT_NEAR(mp::divided_difference(tp, wp),
              mp::divided_difference(std::span(t).first(4), std::span(w).first(4)), 1e-10);
}

// METHODS §2.1 (sizes): too many nodes or mismatched spans are errors, never out-of-bounds reads.
TEST(Lagrange, RejectsBadArguments) {
  std::vector<double> nodes(40, 0.0), basis(40);
  EXPECT_THROW(mp::lagrange_basis(nodes, 0.0, basis), std::invalid_argument);
  std::vector<double> two = {0.0, 1.0}, one(1);
  EXPECT_THROW(mp::lagrange_basis(two, 0.0, one), std::invalid_argument);
  std::vector<double> w(3);
  EXPECT_THROW(mp::uniform_extrapolation_weights(1, w), std::invalid_argument);
}
