// Builders from the history: predictors, comparison polynomials, divided differences
// (METHODS §2.2, §2.3, §5.1; seed 000 Eq. 2.23, 2.24, 3.2, 3.3, 3.8).
#include "macrostep/polynomials/builders.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "grid_support.hpp"
#include "macrostep/polynomials/lagrange.hpp"

namespace mp = macrostep::polynomials;
namespace mt = macrostep::testing;

namespace {

double smooth(double t) {
  return std::sin(3.0 * t) + std::exp(0.5 * t);
}

}  // namespace

// Eq. 2.23: u^pre from the κ+1 newest points reproduces polynomial data of degree ≤ κ.
TEST(Builders, LagrangePredictionIsExactForPolynomials) {
  const std::vector<double> c = {0.5, -1.0, 0.25, 0.8, -0.3, 0.1};
  const auto t = mt::grid_ending_at(1.0, 0.07, mt::random_ratios(10, 21), 10);
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const std::span<const double> cs(c.data(), static_cast<std::size_t>(kappa) + 1);
    const auto h = mt::history_from(
        t, 2, [&](std::size_t ch, double x) { return (ch + 1.0) * mt::poly(cs, x, 0.9); });
    std::vector<double> u(2);
    mp::lagrange_prediction(h, kappa, 1.09, u);
    for (std::size_t ch = 0; ch < 2; ++ch) {
      EXPECT_NEAR(u[ch], (ch + 1.0) * mt::poly(cs, 1.09, 0.9), 1e-11) << "kappa " << kappa;
    }
  }
}

// METHODS §2.3 / seed 000 §5.1: the least-squares predictor equals the Lagrange predictor when
// N_sp = κ+1, reproduces degree-κ data exactly with N_sp = 8, its weights sum to one, and it
// keeps the order: prediction error O(H^{κ+1}) (slope κ+1 ± 0.3).
TEST(Builders, LeastSquaresPredictor) {
  const auto ratios = mt::random_ratios(12, 33);
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const int n_sp = std::max(8, kappa + 2);
    const auto t = mt::grid_ending_at(0.7, 0.05, ratios, 12);
    const auto h = mt::history_from(t, 1, [](std::size_t, double x) { return smooth(x); });
    std::vector<double> lag(1), ls(1);
    mp::lagrange_prediction(h, kappa, 0.76, lag);
    mp::least_squares_prediction(h, kappa, kappa + 1, 0.76, ls);
    EXPECT_NEAR(ls[0], lag[0], 1e-12 * std::abs(lag[0])) << "kappa " << kappa;

    std::vector<double> g(static_cast<std::size_t>(n_sp));
    mp::least_squares_weights(h, kappa, n_sp, 0.76, g);
    double sum = 0.0;
    for (double x : g) sum += x;
    EXPECT_NEAR(sum, 1.0, 1e-12);

    const std::vector<double> c = {1.0, 0.3, -0.7, 0.2, 0.05, -0.01};
    const std::span<const double> cs(c.data(), static_cast<std::size_t>(kappa) + 1);
    const auto hp =
        mt::history_from(t, 1, [&](std::size_t, double x) { return mt::poly(cs, x, 0.5); });
    mp::least_squares_prediction(hp, kappa, n_sp, 0.76, ls);
    EXPECT_NEAR(ls[0], mt::poly(cs, 0.76, 0.5), 1e-10) << "kappa " << kappa;

    std::vector<double> hs, errs;
    for (double step = 0.1; step > 0.005; step /= 2.0) {
      const auto tt = mt::grid_ending_at(0.7, step, ratios, static_cast<std::size_t>(n_sp));
      const auto hh = mt::history_from(tt, 1, [](std::size_t, double x) { return smooth(x); });
      mp::least_squares_prediction(hh, kappa, n_sp, 0.7 + step, ls);
      hs.push_back(step);
      errs.push_back(std::abs(ls[0] - smooth(0.7 + step)));
    }
    EXPECT_NEAR(mt::loglog_slope(hs, errs), kappa + 1.0, 0.3) << "kappa " << kappa;
  }
}

// D-5: the predictor weights g = V(VᵀV)⁻¹e of the unweighted fit on τ = (T − T_N)/H are the
// unique vector with Vᵀg = e (monomials at τ = 1 reproduced) lying in the column space of V.
TEST(Builders, LeastSquaresResidualIsOrthogonalToTheFitSpace) {
  const int kappa = 2, n_sp = 8;
  const auto t = mt::grid_ending_at(0.7, 0.05, mt::random_ratios(8, 4), 8);
  const auto h = mt::history_from(t, 1, [](std::size_t, double x) { return smooth(x); });
  const double t_next = 0.76, H = t_next - 0.7;
  std::vector<double> g(8);
  mp::least_squares_weights(h, kappa, n_sp, t_next, g);
  // g = V (VᵀV)^{-1} e: Vᵀ g = e, i.e. Σ_i g_i τ_i^m = 1 for m = 0..κ (τ = 1 reproduced).
  for (int m = 0; m <= kappa; ++m) {
    double s = 0.0;
    for (std::size_t i = 0; i < 8; ++i) {
      s += g[i] * std::pow((h.time_back(i) - 0.7) / H, m);
    }
    EXPECT_NEAR(s, 1.0, 1e-11) << "m " << m;
  }
  // and g lies in the column space of V: g is a degree-κ polynomial in τ sampled at τ_i,
  // so its (κ+1)-th divided difference over any κ+2 of the τ_i vanishes.
  std::vector<double> ti(4), gi(4);
  for (std::size_t i = 0; i < 4; ++i) {
    ti[i] = (h.time_back(2 * i) - 0.7) / H;
    gi[i] = g[2 * i];
  }
  EXPECT_NEAR(mp::divided_difference(ti, gi), 0.0, 1e-10);
}

// Eq. 3.8: û^pre is the degree-(κ+1) prediction through the κ+2 newest points.
TEST(Builders, MilneComparisonPredictionIsDegreeKappaPlusOne) {
  const auto t = mt::grid_ending_at(1.0, 0.1, mt::random_ratios(8, 8), 8);
  const auto h = mt::history_from(t, 2, [](std::size_t c, double x) { return smooth(x + c); });
  for (int kappa = 0; kappa <= 5; ++kappa) {
    std::vector<double> hat(2), ref(2);
    mp::milne_comparison_prediction(h, kappa, 1.12, hat);
    mp::lagrange_prediction(h, kappa + 1, 1.12, ref);
    EXPECT_EQ(hat, ref);
  }
  std::vector<double> out(2);
  const auto short_h =
      mt::history_from(std::span(t).last(3), 2, [](std::size_t, double) { return 0.0; });
  EXPECT_THROW(mp::milne_comparison_prediction(short_h, 2, 1.12, out), std::invalid_argument);
}

// Eq. 3.2/3.3: the exLE comparison polynomial has degree κ+1, its nodes are T_{N−κ}..T_{N+1},
// and it coincides with the degree-(κ+1) extrapolation through T_{N−κ−1}..T_N, including at
// T_{N−κ−1}, which is not one of its nodes.
TEST(Builders, ExtrapolationComparisonPolynomial) {
  const auto t = mt::grid_ending_at(1.0, 0.1, mt::random_ratios(8, 9), 8);
  const auto h =
      mt::history_from(t, 3, [](std::size_t c, double x) { return smooth(x * (c + 1)); });
  const std::vector<std::size_t> inputs = {1, 2};
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const mp::SupportPoints sp = mp::extrapolation_comparison_polynomial(h, kappa, 1.08, inputs);
    EXPECT_EQ(sp.degree, kappa + 1);
    ASSERT_NO_THROW(sp.validate());
    const std::size_t n = static_cast<std::size_t>(kappa) + 2;
    std::vector<double> nodes(n), vals(n), u(2);
    for (std::size_t m = 0; m < n; ++m) nodes[m] = h.time_back(n - 1 - m);
    for (double te : {h.time_back(n - 1), 0.97, 1.0, 1.05, 1.08}) {
      sp.evaluate(te, u);
      for (std::size_t k = 0; k < 2; ++k) {
        for (std::size_t m = 0; m < n; ++m) vals[m] = h.values_back(n - 1 - m)[inputs[k]];
        EXPECT_NEAR(u[k], mp::lagrange_value(nodes, vals, te), 1e-10)
            << "kappa " << kappa << " t " << te;
      }
    }
  }
  EXPECT_THROW(mp::extrapolation_comparison_polynomial(h, 6, 1.08, inputs), std::invalid_argument);
}

// Divided differences of the newest points (SDN, Eq. 3.26): degree-j data has u[T_M..T_{M−j}]
// equal to its leading coefficient.
TEST(Builders, NewestDividedDifference) {
  const auto t = mt::grid_ending_at(2.0, 0.2, mt::random_ratios(6, 12), 6);
  const std::vector<double> c = {1.0, -2.0, 0.5, 3.0};  // leading 3.0 (degree 3)
  const auto h = mt::history_from(
      t, 2, [&](std::size_t ch, double x) { return ch == 0 ? mt::poly(c, x, 1.5) : 4.0; });
  std::vector<double> d(2);
  mp::newest_divided_difference(h, 3, d);
  EXPECT_NEAR(d[0], 3.0, 1e-10);
  EXPECT_NEAR(d[1], 0.0, 1e-12);
  mp::newest_divided_difference(h, 0, d);
  EXPECT_EQ(d[0], h.newest_values()[0]);
  EXPECT_THROW(mp::newest_divided_difference(h, 6, d), std::invalid_argument);
}

// METHODS §2.2 builders / DESIGN contract 5: a history too short for κ is named, not read past.
TEST(Builders, TooShortHistoryIsNamed) {
  const auto h =
      mt::history_from(std::vector<double>{0.0, 0.1}, 1, [](std::size_t, double x) { return x; });
  std::vector<double> u(1);
  try {
    mp::lagrange_prediction(h, 2, 0.2, u);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mp::least_squares_prediction(h, 0, 3, 0.2, u), std::invalid_argument);
}
