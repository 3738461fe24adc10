// Weights, WRMS norm and the local error test (METHODS §0, §6.1, §9; seed 000 Eq. 3.21–3.23).
#include "macrostep/control/error_norm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mct = macrostep::control;

// METHODS §9 defaults: rtol 1e-4, atol_pos 1e-3·rtol, atol_vel rtol, atol_u 1e4·rtol.
TEST(ErrorNorm, DefaultTolerancesFollowSection9) {
  const mct::ErrorTolerances d;
  EXPECT_EQ(d.rtol, 1e-4);
  EXPECT_DOUBLE_EQ(d.atol_pos, 1e-3 * d.rtol);
  EXPECT_DOUBLE_EQ(d.atol_vel, d.rtol);
  EXPECT_DOUBLE_EQ(d.atol_u, 1e4 * d.rtol);
  const auto t = mct::ErrorTolerances::for_rtol(1e-6);
  EXPECT_DOUBLE_EQ(t.atol_pos, 1e-9);
  EXPECT_DOUBLE_EQ(t.atol_vel, 1e-6);
  EXPECT_DOUBLE_EQ(t.atol_u, 1e-2);
  EXPECT_NO_THROW(t.validate());
  mct::ErrorTolerances bad;
  bad.atol_u = 0.0;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
  bad = {};
  bad.rtol = -1.0;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
}

// ‖e‖_W = sqrt((1/n)Σ(e_i W_i)²), W_i = 1/(atol_i + rtol·|x_i|).
TEST(ErrorNorm, WeightsAndWrmsByHand) {
  mct::ErrorTolerances tol;
  tol.rtol = 0.5;
  tol.atol_pos = 1.0;
  const std::vector<double> x = {2.0, -4.0};
  std::vector<double> w(2);
  mct::error_weights(x, tol, mct::WeightGroup::kPosition, w);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 2.0);
  EXPECT_DOUBLE_EQ(w[1], 1.0 / 3.0);
  const std::vector<double> e = {3.0, 6.0};  // e·w = 1.5, 2
  EXPECT_DOUBLE_EQ(mct::wrms_norm(e, w), std::sqrt((1.5 * 1.5 + 2.0 * 2.0) / 2.0));
  // Per-component atol overrides the scalar for its group only.
  tol.atol_vel_each = {0.5, 1.5};
  mct::error_weights(x, tol, mct::WeightGroup::kVelocity, w);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 1.5);
  EXPECT_DOUBLE_EQ(w[1], 1.0 / 3.5);
  mct::error_weights(x, tol, mct::WeightGroup::kPosition, w);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 2.0);
  tol.atol_u_each = {1.0};
  EXPECT_THROW(mct::error_weights(x, tol, mct::WeightGroup::kCouplingVariable, w),
               std::invalid_argument);
  EXPECT_EQ(mct::wrms_norm(std::vector<double>{}, std::vector<double>{}), 0.0);
}

// METHODS §0/§5.1: the allocation-free norm of scale·|a − b| is the WRMS norm of ε.
TEST(ErrorNorm, ScaledDifferenceNormEqualsWeightedVectorNorm) {
  mct::ErrorTolerances tol;
  const std::vector<double> a = {1.0, 2.0, -3.0}, b = {1.1, 1.7, -3.05}, ref = {0.5, 20.0, 1e3};
  std::vector<double> w(3), e(3);
  mct::error_weights(ref, tol, mct::WeightGroup::kCouplingVariable, w);
  for (std::size_t i = 0; i < 3; ++i) e[i] = 0.75 * std::abs(a[i] - b[i]);
  EXPECT_DOUBLE_EQ(
      mct::scaled_difference_norm(a, b, 0.75, ref, tol, mct::WeightGroup::kCouplingVariable),
      mct::wrms_norm(e, w));
}

// METHODS §6.1 (seed 000 Eq. 3.21-3.23): one WRMS norm per weight group over its components in
// index order, per-component atol indexed within the group; bit-identical to
// scaled_difference_norm on each group's components taken apart (contract 1).
TEST(ErrorNorm, GroupedNormsEqualTheNormOfEachGroupApart) {
  using G = mct::WeightGroup;
  mct::ErrorTolerances tol;
  tol.rtol = 1e-3;
  tol.atol_pos = 1e-6;
  tol.atol_vel_each = {1e-3, 2e-3, 5e-4};
  const std::vector<G> groups = {G::kPosition, G::kVelocity, G::kVelocity, G::kPosition,
                                 G::kVelocity};
  const std::vector<double> a = {1e-3, 0.7, -1.2, 3e-4, 0.05};
  const std::vector<double> b = {1.2e-3, 0.71, -1.18, 2.5e-4, 0.0499};
  const mct::PerWeightGroup scale = {0.75, 0.9, 1.0};
  const auto norms = mct::grouped_difference_norms(a, b, groups, scale, a, tol);
  const std::vector<double> ap = {a[0], a[3]}, bp = {b[0], b[3]};
  const std::vector<double> av = {a[1], a[2], a[4]}, bv = {b[1], b[2], b[4]};
  EXPECT_EQ(norms[0], mct::scaled_difference_norm(ap, bp, 0.75, ap, tol, G::kPosition));
  EXPECT_EQ(norms[1], mct::scaled_difference_norm(av, bv, 0.9, av, tol, G::kVelocity));
  EXPECT_EQ(norms[2], 0.0);  // no coupling-variable components
  // By hand (§0): sqrt((1/n) Σ (scale·|a − b|·W)²).
  const double p0 = 0.75 * 2e-4 / (1e-6 + 1e-3 * 1e-3);
  const double p1 = 0.75 * 5e-5 / (1e-6 + 1e-3 * 3e-4);
  EXPECT_NEAR(norms[0], std::sqrt((p0 * p0 + p1 * p1) / 2.0), 1e-12 * norms[0]);
  const double v0 = 0.9 * 0.01 / (1e-3 + 1e-3 * 0.7);
  const double v1 = 0.9 * 0.02 / (2e-3 + 1e-3 * 1.2);
  const double v2 = 0.9 * 1e-4 / (5e-4 + 1e-3 * 0.05);
  EXPECT_NEAR(norms[1], std::sqrt((v0 * v0 + v1 * v1 + v2 * v2) / 3.0), 1e-12 * norms[1]);
  // A per-component vector must match its group's size; an empty group is not checked.
  tol.atol_pos_each = {1e-6, 1e-6, 1e-6};
  EXPECT_THROW(mct::grouped_difference_norms(a, b, groups, scale, a, tol), std::invalid_argument);
  tol.atol_pos_each.clear();
  tol.atol_u_each = {1.0};
  EXPECT_NO_THROW(mct::grouped_difference_norms(a, b, groups, scale, a, tol));
  EXPECT_THROW(mct::grouped_difference_norms(a, b, std::vector<G>(4, G::kPosition), scale, a, tol),
               std::invalid_argument);
}

// §6.1: concept 1 passes iff max(‖ε^pos‖, ‖ε^vel‖) ≤ 1; concept 2 iff ‖ε^u‖ ≤ 1; no estimator
// always passes; NaN never passes.
TEST(ErrorNorm, LocalErrorTest) {
  EXPECT_TRUE(mct::ErrorEstimate::states(1.0, 0.2).passed());
  EXPECT_FALSE(mct::ErrorEstimate::states(0.2, std::nextafter(1.0, 2.0)).passed());
  EXPECT_FALSE(mct::ErrorEstimate::states(1.01, 0.0).passed());
  EXPECT_EQ(mct::ErrorEstimate::states(0.3, 0.7).norm(), 0.7);
  EXPECT_TRUE(mct::ErrorEstimate::coupling_variables(0.99).passed());
  EXPECT_FALSE(mct::ErrorEstimate::coupling_variables(1.5).passed());
  EXPECT_TRUE(mct::ErrorEstimate::none().passed());
  EXPECT_FALSE(mct::ErrorEstimate::states(0.1, std::nan("")).passed());
  EXPECT_FALSE(mct::ErrorEstimate::states(std::nan(""), 0.1).passed());
  EXPECT_FALSE(mct::ErrorEstimate::coupling_variables(std::nan("")).passed());
}
