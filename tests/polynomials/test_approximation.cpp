// The continuous and seed-003 approximations (runtime/polynomials/approximation.hpp; METHODS.md
// §2.4, §2.5; seed 001 §2, Eq. 12a/12b; seed 003 §2.2): the published weights, continuity at the
// macro points, the support-point form the worker evaluates.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::polynomials {
namespace {

double f(double t) {
  return std::sin(3.0 * t) + t * t;
}
double df(double t) {
  return 3.0 * std::cos(3.0 * t) + 2.0 * t;
}

// A non-uniform grid and the history of f (and f') up to index last.
const std::vector<double> kTimes = {0.0, 0.1, 0.17, 0.3, 0.38, 0.5, 0.61, 0.7, 0.82};

CouplingHistory history_of(std::size_t last, bool rates = false) {
  CouplingHistory h(1);
  for (std::size_t i = 0; i <= last; ++i) {
    const double v = rates ? df(kTimes[i]) : f(kTimes[i]);
    h.push(kTimes[i], std::span<const double>(&v, 1));
  }
  return h;
}

SupportPoints polynomial(const Approximation& a, int order, std::size_t last,
                         const CouplingHistory* rates = nullptr) {
  const CouplingHistory h = history_of(last);
  const Approximation* ptr = &a;
  const std::size_t channel = 0;
  return approximation_polynomial(h, rates, std::span<const Approximation* const>(&ptr, 1), order,
                                  kTimes[last + 1], std::span<const std::size_t>(&channel, 1));
}

double value(const SupportPoints& sp, double t) {
  double u = 0.0;
  sp.evaluate(t, std::span<double>(&u, 1));
  return u;
}

double slope(const SupportPoints& sp, double t) {
  std::array<double, SupportPoints::kMaxNodes> d{};
  const std::size_t n = sp.node_count();
  lagrange_basis_derivative(std::span<const double>(sp.time.data(), n), t,
                            std::span<double>(d.data(), n));
  double s = 0.0;
  for (std::size_t m = 0; m < n; ++m) s += d[m] * sp.value[0][m];
  return s;
}

void expect_weights(const char* name, std::array<double, 4> ab, double tol) {
  const Approximation a = parse_approximation(name);
  EXPECT_NEAR(a.weights.a[0], ab[0], tol) << name;
  EXPECT_NEAR(a.weights.a[1], ab[1], tol) << name;
  EXPECT_NEAR(a.weights.b[0], ab[2], tol) << name;
  EXPECT_NEAR(a.weights.b[1], ab[3], tol) << name;
}

// METHODS §2.5 compromise sets as printed (seed 003 Eq. 2.64, 2.65, 2.67, 2.68), from the
// family formulas Eq. 2.62 / 2.66 with their parameters; Const 2,4 is the R = 3 member p = 7/12.
TEST(Approximation, Seed003CompromiseSetsReproduceThePublishedWeights) {
  expect_weights("const-2-3-opt", {2.0 / 3, 1.0 / 3, 5.0 / 6, 0.0}, 1e-15);
  expect_weights("lin-2-3-opt", {1.0731067, -0.0731067, 0.6301133, -0.20322}, 5e-8);
  expect_weights("const-2-2-opt", {1.3370, -0.33700, 0.363, -0.2}, 1e-12);
  expect_weights("lin-2-2-opt", {0.83990, 0.1601, 0.667, -0.0069}, 1e-12);
  const LinearCombination c24 = parse_approximation("const-2-4").weights;
  const LinearCombination member = family_r3(7.0 / 12.0);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(c24.a[k], member.a[k], 1e-15);
    EXPECT_NEAR(c24.b[k], member.b[k], 1e-15);
  }
}

// Seed 003 Eq. 2.28 (METHODS §2.5): Σ_k [(−k)^n/n!·a_k + (−k)^{n−1}/(n−1)!·b_k] = 1/(n+1)! for
// n < R. Each named set satisfies its R constraints.
TEST(Approximation, Seed003SetsSatisfyTheirOrderConstraints) {
  struct Set {
    const char* name;
    int r;
  };
  const Set sets[] = {{"const-1-1", 1},     {"const-1-2", 2},     {"const-2-2-b0", 2},
                      {"const-3-3-b0", 3},  {"const-2-4", 4},     {"const-3-6", 6},
                      {"const-2-3-opt", 3}, {"lin-2-3-opt", 3},   {"const-2-2-opt", 2},
                      {"lin-2-2-opt", 2},   {"lin-2-3:p=0.3", 3}, {"const-2-2:p1=0.1,p2=0.5", 2}};
  for (const Set& s : sets) {
    const LinearCombination w = parse_approximation(s.name).weights;
    double fact = 1.0;  // n!
    for (int n = 0; n < s.r; ++n) {
      if (n > 0) fact *= n;
      double sum = 0.0;
      for (int k = 0; k < w.points; ++k) {
        const auto kk = static_cast<std::size_t>(k);
        sum += std::pow(-k, n) / fact * w.a[kk];
        if (n > 0) sum += std::pow(-k, n - 1) / (fact / n) * w.b[kk];
      }
      EXPECT_NEAR(sum, 1.0 / (fact * (n + 1)), 1e-12) << s.name << " n = " << n;
    }
  }
}

// METHODS §2.4 uniform slopes H·Φ̇_{N+1} of C1: k = 1: y_N − y_{N−1}; k = 2: 2.5, −4, 1.5;
// k = 3: 13/3, −19/2, 7, −11/6 — the stencil's cubic has them as its θ-slope at θ = 1.
TEST(Approximation, C1EndSlopesAreTheUniformWeightsOfMethods) {
  const std::vector<std::vector<double>> expected = {
      {1.0, -1.0}, {2.5, -4.0, 1.5}, {13.0 / 3, -9.5, 7.0, -11.0 / 6}};
  const std::array<double, 8> times{0, -1, -2, -3, -4, -5, -6, -7};
  for (int k = 1; k <= 3; ++k) {
    const Stencil s = make_stencil(parse_approximation("c1"), k, times, 1.0);
    std::array<double, 4> d{};
    lagrange_basis_derivative(std::span<const double>(s.theta.data(), 4), 1.0, d);
    for (std::size_t j = 0; j < expected[static_cast<std::size_t>(k - 1)].size(); ++j) {
      double w = 0.0;
      for (std::size_t m = 0; m < 4; ++m) w += d[m] * s.w[m][j];
      EXPECT_NEAR(w, expected[static_cast<std::size_t>(k - 1)][j], 1e-12) << "k " << k;
    }
  }
}

// Seed 001 Eq. 12 (METHODS §2.4 "Shape"): on a non-uniform grid the step polynomial starts where
// the previous one ended (C0 and C1), with the same slope (C1), and ends at the Lagrange
// extrapolated value; it does not pass through y_N.
TEST(Approximation, C0AndC1AreContinuousAtMacroPoints) {
  for (const char* name : {"c0", "c1"}) {
    for (int k = 0; k <= 3; ++k) {
      // From the step on which both polynomials have their full k + 2 points.
      for (std::size_t n = static_cast<std::size_t>(k) + 2; n + 1 < kTimes.size(); ++n) {
        const SupportPoints before = polynomial(parse_approximation(name), k, n - 1);
        const SupportPoints after = polynomial(parse_approximation(name), k, n);
        const double t = kTimes[n];
        EXPECT_NEAR(value(after, t), value(before, t), 1e-13) << name << " k " << k;
        if (std::string(name) == "c1") {
          EXPECT_NEAR(slope(after, t), slope(before, t), 1e-11) << "k " << k;
        }
        const CouplingHistory h = history_of(n);
        double u_pre = 0.0;
        lagrange_prediction(h, k, kTimes[n + 1], std::span<double>(&u_pre, 1));
        EXPECT_NEAR(value(after, kTimes[n + 1]), u_pre, 1e-13) << name << " k " << k;
      }
    }
  }
  // Lagrange extrapolation jumps at T_N (METHODS §2.2): the same check fails for it.
  const SupportPoints before = polynomial(parse_approximation("lagrange"), 2, 4);
  const SupportPoints after = polynomial(parse_approximation("lagrange"), 2, 5);
  EXPECT_GT(std::abs(value(after, kTimes[5]) - value(before, kTimes[5])), 1e-6);
}

// The Lagrange stencil is the runtime's own step polynomial p_{N+1}(t; u_pre) (METHODS §2.2).
TEST(Approximation, LagrangeStencilIsTheStepPolynomial) {
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const CouplingHistory h = history_of(7);
    double u_pre = 0.0;
    lagrange_prediction(h, kappa, kTimes[8], std::span<double>(&u_pre, 1));
    const SupportPoints ref =
        step_polynomial(h, kappa, kTimes[8], std::span<const double>(&u_pre, 1));
    const SupportPoints got = polynomial(parse_approximation("lagrange"), kappa, 7);
    ASSERT_EQ(got.degree, ref.degree);
    for (std::size_t m = 0; m < ref.node_count(); ++m) {
      EXPECT_EQ(got.time[m], ref.time[m]);
      EXPECT_NEAR(got.value[0][m], ref.value[0][m], 1e-14);
    }
    EXPECT_NO_THROW(got.validate());
  }
}

// Seed 003 Eq. 2.10, 2.33–2.35: Const holds e_0 = Σ a_k u^{l−k} + b_k u̇^{l−k} H; Lin starts at u^l
// and has the same step integral, i.e. ends at 2·e_0 − u^l.
TEST(Approximation, ConstAndLinFromHistoryAndRates) {
  const CouplingHistory rates = history_of(6, true);
  const double h = kTimes[7] - kTimes[6];
  for (const char* name : {"const-2-3-opt", "lin-2-3-opt"}) {
    const Approximation a = parse_approximation(name);
    const SupportPoints sp = polynomial(a, 0, 6, &rates);
    const auto& w = a.weights;
    const double e0 = w.a[0] * f(kTimes[6]) + w.a[1] * f(kTimes[5]) +
                      h * (w.b[0] * df(kTimes[6]) + w.b[1] * df(kTimes[5]));
    if (a.kind == ApproximationKind::kConst) {
      EXPECT_EQ(sp.degree, 0);
      EXPECT_NEAR(value(sp, kTimes[6] + 0.3 * h), e0, 1e-14);
    } else {
      EXPECT_NEAR(value(sp, kTimes[6]), f(kTimes[6]), 1e-14);
      EXPECT_NEAR(value(sp, kTimes[7]), 2.0 * e0 - f(kTimes[6]), 1e-14);
    }
  }
  // Without rates a set with b ≠ 0 cannot be built.
  EXPECT_THROW((void)polynomial(parse_approximation("lin-2-3-opt"), 0, 6), std::invalid_argument);
}

// Channels with different approximations share one node set; each keeps its own polynomial.
TEST(Approximation, MixedChannelsKeepTheirOwnPolynomials) {
  CouplingHistory h(2);
  for (std::size_t i = 0; i <= 6; ++i) {
    const double u[2] = {f(kTimes[i]), 2.0 * f(kTimes[i]) + 1.0};
    h.push(kTimes[i], u);
  }
  const Approximation c0 = parse_approximation("c0"), lagrange = parse_approximation("lagrange");
  const Approximation* both[2] = {&c0, &lagrange};
  const std::size_t channels[2] = {0, 1};
  const SupportPoints sp = approximation_polynomial(h, nullptr, both, 3, kTimes[7], channels);
  const SupportPoints alone0 = polynomial(c0, 3, 6);
  double u_pre[2] = {};
  lagrange_prediction(h, 3, kTimes[7], u_pre);
  const SupportPoints alone1 = step_polynomial(h, 3, kTimes[7], u_pre);
  EXPECT_EQ(sp.degree, 3);
  for (double t : {kTimes[6], 0.65, kTimes[7]}) {
    double u[2] = {}, v1[2] = {};
    sp.evaluate(t, u);
    alone1.evaluate(t, v1);
    EXPECT_NEAR(u[0], value(alone0, t), 1e-13);
    EXPECT_NEAR(u[1], v1[1], 1e-13);
  }
}

// D-9 and the start-up: with a short history C0/C1 lower k (one point: ũ ≡ u_N), a seed-003 set
// with fewer than K points is Const 1,1,b=0.
TEST(Approximation, ShortHistoriesFallBack) {
  const SupportPoints one = polynomial(parse_approximation("c1"), 3, 0);
  EXPECT_EQ(one.degree, 0);
  EXPECT_EQ(value(one, 0.05), f(0.0));
  const SupportPoints two = polynomial(parse_approximation("c1"), 3, 1);  // k = 0: smoothstep
  EXPECT_NEAR(value(two, kTimes[1]), f(kTimes[0]), 1e-15);
  EXPECT_NEAR(value(two, kTimes[2]), f(kTimes[1]), 1e-15);
  const SupportPoints lin = polynomial(parse_approximation("const-2-2-b0"), 0, 0);
  EXPECT_EQ(lin.degree, 0);
  EXPECT_EQ(value(lin, 0.05), f(0.0));
}

TEST(Approximation, UnknownNamesAndDegreesAreRefused) {
  EXPECT_THROW((void)parse_approximation("c2"), std::invalid_argument);
  EXPECT_THROW((void)parse_approximation("lin-2-3:p=x"), std::invalid_argument);
  EXPECT_THROW((void)parse_approximation("const-2-2:p1=1"), std::invalid_argument);
  const std::array<double, 8> times{0, -1, -2, -3, -4, -5, -6, -7};
  EXPECT_THROW((void)make_stencil(parse_approximation("c0"), 4, times, 1.0), std::invalid_argument);
  EXPECT_THROW((void)make_stencil(parse_approximation("c0"), 2, times, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep::polynomials
