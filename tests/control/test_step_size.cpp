// Step-size factor and limits (METHODS §6.2; seed 000 Eq. 3.26–3.28, Listing 3.3; D-25, D-27).
#include "macrostep/control/step_size.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "control_support.hpp"
#include "macrostep/polynomials/builders.hpp"

namespace mp = macrostep::polynomials;
namespace mct = macrostep::control;
namespace mt = macrostep::testing;

// §9 defaults: Γ = 6, r_min 0.5, r_max 1.5, dead zone on.
TEST(StepSize, DefaultsFollowSection9) {
  const mct::StepSizeOptions o;
  EXPECT_EQ(o.safety, 6.0);
  EXPECT_EQ(o.r_min, 0.5);
  EXPECT_EQ(o.r_max, 1.5);
  EXPECT_TRUE(o.dead_zone);
}

// Listing 3.3, N_fail = 0 (accepted step).
TEST(StepSize, AcceptedStepBranches) {
  const mct::StepSizeController c;
  EXPECT_EQ(c.limit(3.0, 0, false), 1.5);   // r ≥ r_max → r_max
  EXPECT_EQ(c.limit(1.5, 0, false), 1.5);   // boundary belongs to the r_max branch
  EXPECT_EQ(c.limit(1.49, 0, false), 1.0);  // dead zone [1, r_max)
  EXPECT_EQ(c.limit(1.0, 0, false), 1.0);
  EXPECT_EQ(c.limit(0.95, 0, false), 0.9);  // shrink at least to 0.9
  EXPECT_EQ(c.limit(0.7, 0, false), 0.7);
  EXPECT_EQ(c.limit(0.2, 0, false), 0.5);  // never below r_min
}

// METHODS §9 dead zone "off only in the Γ study": 1 ≤ r < r_max kept, the shrink rule stays.
TEST(StepSize, DeadZoneOff) {
  mct::StepSizeOptions o;
  o.dead_zone = false;
  const mct::StepSizeController c(o);
  EXPECT_EQ(c.limit(1.2, 0, false), 1.2);
  EXPECT_EQ(c.limit(2.0, 0, false), 1.5);
  EXPECT_EQ(c.limit(0.95, 0, false), 0.9);
}

// Listing 3.3, N_fail = 1, N_fail > 1 and corrector failure.
TEST(StepSize, FailedStepBranches) {
  const mct::StepSizeController c;
  EXPECT_DOUBLE_EQ(c.limit(0.5, 1, false), 0.45);  // 0.9·r
  EXPECT_EQ(c.limit(2.0, 1, false), 0.9);          // at least a 10 % cut
  EXPECT_EQ(c.limit(0.1, 1, false), 0.25);         // lower bound 0.25
  EXPECT_EQ(c.limit(0.8, 2, false), 0.25);         // second failure: 0.25 whatever r
  EXPECT_EQ(c.limit(1.4, 7, false), 0.25);
  EXPECT_EQ(c.limit(0.8, 1, true), 0.25);  // corrector failure
  EXPECT_EQ(c.limit(std::nan(""), 1, false), 0.25);
}

// Eq. 3.27: r = (Γ‖ε‖)^{−1/p} with p = κ+3 (pos), κ+2 (vel), κ+1 (u): the new step H·r would
// have met Γ‖ε‖·r^p = 1 exactly. Checked per group and per κ, with norms chosen so that the
// three exponents give clearly different factors.
TEST(StepSize, ExponentsPerGroup) {
  const mct::StepSizeController c;
  for (int kappa = 0; kappa <= 5; ++kappa) {
    const double n = 0.3;
    const double r_pos = c.a_posteriori_factor(mct::ErrorEstimate::states(n, 0.0), kappa);
    const double r_vel = c.a_posteriori_factor(mct::ErrorEstimate::states(0.0, n), kappa);
    const double r_u = c.a_posteriori_factor(mct::ErrorEstimate::coupling_variables(n), kappa);
    const double r_pri = c.a_priori_factor(n, kappa);
    EXPECT_NEAR(6.0 * n * std::pow(r_pos, kappa + 3), 1.0, 1e-13) << kappa;
    EXPECT_NEAR(6.0 * n * std::pow(r_vel, kappa + 2), 1.0, 1e-13) << kappa;
    EXPECT_NEAR(6.0 * n * std::pow(r_u, kappa + 1), 1.0, 1e-13) << kappa;
    EXPECT_NEAR(6.0 * n * std::pow(r_pri, kappa + 1), 1.0, 1e-13) << kappa;
    EXPECT_LT(r_u, r_vel);  // Γn > 1, so a smaller exponent denominator cuts harder
    EXPECT_LT(r_vel, r_pos);
    // concept 1 takes the more restrictive group
    const double both = c.a_posteriori_factor(mct::ErrorEstimate::states(n, 10 * n), kappa);
    EXPECT_EQ(both, std::min(c.factor(n, kappa + 3), c.factor(10 * n, kappa + 2)));
  }
  EXPECT_THROW(c.a_posteriori_factor(mct::ErrorEstimate::none(), 1), std::invalid_argument);
}

// D-25: a zero error norm gives r = r_max.
TEST(StepSize, ZeroNormGivesRMax) {
  const mct::StepSizeController c;
  EXPECT_EQ(c.factor(0.0, 3), 1.5);
  EXPECT_EQ(c.a_posteriori_factor(mct::ErrorEstimate::states(0.0, 0.0), 2), 1.5);
  EXPECT_EQ(c.factor(std::numeric_limits<double>::infinity(), 3), 0.0);
}

// D-27: H_min = 1e−14·max(1, |T|) (1e−22 s while |T| < 1e−8 s), abort below it; optional H_max.
TEST(StepSize, StepLimits) {
  mct::StepSizeOptions o;
  o.h_max = 0.01;
  const mct::StepSizeController c(o);
  EXPECT_EQ(c.next_step(0.008, 1.5, 0.0), 0.01);
  EXPECT_DOUBLE_EQ(c.next_step(0.008, 0.5, 0.0), 0.004);
  EXPECT_EQ(mct::StepSizeController::min_step(0.5), 1e-14);
  EXPECT_EQ(mct::StepSizeController::min_step(-200.0), 2e-12);
  EXPECT_DOUBLE_EQ(mct::StepSizeController::min_step(0.0), 1e-22);
  EXPECT_DOUBLE_EQ(mct::StepSizeController::min_step(1e-9), 1e-22);
  EXPECT_NO_THROW(c.next_step(4e-14, 0.25, 0.5));  // 1e-14 = H_min at T = 0.5
  EXPECT_THROW(c.next_step(3.9e-14, 0.25, 0.5), mct::StepSizeUnderflow);
  EXPECT_EQ(mct::StepSizeController::min_step(2e-8), 1e-14);
  EXPECT_NO_THROW(c.next_step(4e-16, 0.25, 0.0));  // a start can resolve a picosecond layer
  try {
    c.next_step(1e-12, 0.25, 100.0);  // 2.5e-13 < 1e-12
    FAIL();
  } catch (const mct::StepSizeUnderflow& e) {
    EXPECT_EQ(e.time(), 100.0);
    EXPECT_DOUBLE_EQ(e.minimum(), 1e-12);
  }
  mct::StepSizeOptions bad;
  bad.r_max = 0.8;
  EXPECT_THROW(mct::StepSizeController{bad}, std::invalid_argument);
}

// Eq. 3.26: ε̃ = P_{κ+1}(T_{M+1}) − P_κ(T_{M+1}), computed through the divided difference; here
// compared with the two predictions built independently by the Lagrange predictor.
TEST(StepSize, APrioriEstimateEqualsDifferenceOfPredictors) {
  const auto t = mt::grid_ending_at(1.0, 0.05, mt::random_ratios(8, 19), 8);
  const auto hist = mt::history_from(t, 2, [](std::size_t c, double x) {
    return c == 0 ? std::sin(4.0 * x) : std::exp(x) * 100.0;
  });
  const double t_next = 1.0 + 0.06;
  for (int kappa = 0; kappa <= 5; ++kappa) {
    std::vector<double> eps(2), hi(2), lo(2);
    mct::a_priori_error(hist, kappa, t_next, eps);
    mp::lagrange_prediction(hist, kappa + 1, t_next, hi);
    mp::lagrange_prediction(hist, kappa, t_next, lo);
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(eps[c], hi[c] - lo[c], 1e-9 * (std::abs(hi[c]) + 1e-3)) << "kappa " << kappa;
    }
    // The norm weights ε̃ with W^u at u_M (D-25).
    mct::ErrorTolerances tol;
    std::vector<double> w(2);
    mct::error_weights(hist.newest_values(), tol, mct::WeightGroup::kCouplingVariable, w);
    EXPECT_NEAR(mct::a_priori_error_norm(hist, kappa, t_next, tol), mct::wrms_norm(eps, w),
                1e-12 * mct::wrms_norm(eps, w));
  }
  std::vector<double> eps(2);
  const auto short_hist =
      mt::history_from(std::span(t).last(2), 2, [](std::size_t, double) { return 1.0; });
  EXPECT_THROW(mct::a_priori_error(short_hist, 1, t_next, eps), std::invalid_argument);
}
