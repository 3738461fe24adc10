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
