// D-49: a lowering of κ checked against the attempt that follows it (docs/design/methods.md §6.3).
#include <gtest/gtest.h>

#include <vector>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/control/order.hpp"

namespace mct = macrostep::control;

namespace {

using Check = mct::OrderController::OrderChangeCheck;

mct::MacroStepOptions check_options(int kappa_max) {
  mct::MacroStepOptions o;
  o.mode = mct::StepSizeMode::kVariable;
  o.h = 1e-3;
  o.t_end = 100.0;
  o.estimator = mct::Estimator::kImCV;  // D-49 checks iterative steps
  o.variable_start = false;
  o.order.kappa_max = kappa_max;
  return o;
}

// A coupling variable that rises linearly and, once `zigzag` is set, alternates by ±50 from
// one accepted point to the next: the parasitic component that makes SDN(2) large.
struct ZigzagU {
  bool zigzag = false;
  int points = 0;
  double operator()(double t) {
    ++points;
    return 1e3 * t + (zigzag ? (points % 2 ? 50.0 : -50.0) : 0.0);
  }
};

mct::StepVerdict complete_with(mct::MacroStepController& c, double estimate, ZigzagU& u) {
  std::vector<double> next = {u(c.plan().t_end)};
  return c.complete({mct::ErrorEstimate::coupling_variables(estimate), false, next});
}

constexpr double kSmall = 1e-12;  // passes, r = r_max
constexpr double kFails = 5.0;    // fails the error test

}  // namespace

TEST(OrderChangeCheck, HoldsDoubleUpToTheLongestAndAKeptLoweringResetsThem) {
  mct::OrderController c;
  c.note_lowering(1, 1e-3);
  EXPECT_TRUE(c.lowering_pending());
  EXPECT_EQ(c.lowering_failed(2e-3), -1);  // the first failed lowering is Listing 3.2's
  EXPECT_FALSE(c.lowering_pending());
  EXPECT_EQ(c.change_check().lower_hold, 0);
  c.note_lowering(1, 1e-3);
  EXPECT_EQ(c.lowering_failed(2e-3), 1);  // the second in a row refutes it
  EXPECT_FALSE(c.lowering_pending());
  EXPECT_EQ(c.change_check().lower_hold, 4);
  EXPECT_EQ(c.change_check().next_lower_hold, 8);
  for (int i = 0; i < 3; ++i) c.record_attempt(true, 1e-3, 1);
  EXPECT_EQ(c.change_check().lower_hold, 1);
  c.record_attempt(true, 4e-4, 1);  // below a quarter of the refuted step: the hold ends
  EXPECT_EQ(c.change_check().lower_hold, 0);
  for (int i = 0; i < 12; ++i) {
    c.note_lowering(1, 1e-3);
    c.lowering_failed(2e-3);
  }
  EXPECT_EQ(c.change_check().lower_hold, Check::kLongestHold);
  c.record_attempt(false, 2e-3, 1);  // a failure ends the hold
  EXPECT_EQ(c.change_check().lower_hold, 0);
  c.note_lowering(1, 1e-3);
  c.confirm_lowering(false);  // kept with r < 1: the doubling goes on
  EXPECT_EQ(c.change_check().next_lower_hold, Check::kLongestHold);
  c.note_lowering(1, 1e-3);
  c.confirm_lowering(true);
  EXPECT_EQ(c.change_check().next_lower_hold, Check::kFirstHold);
  c.note_lowering(1, 1e-3);
  EXPECT_EQ(c.lowering_failed(2e-3), -1);  // a kept lowering started the count again
}

// With a hold, the SDN tests of Listing 3.2 and Listing 3.1 do not lower κ to 0; lowerings from
// κ ≥ 2 to 1 and the failure overrides still happen.
TEST(OrderChangeCheck, AHoldStopsSdnLoweringsButNotTheFailureOverrides) {
  const auto sdn = mct::ScaledDerivativeNorms::from_values({1.0, 1.0, 5.0, 1.0});
  for (auto strategy : {mct::OrderStrategy::kIdaLike, mct::OrderStrategy::kConservative}) {
    mct::OrderController c({strategy, mct::kMaxKappa});
    EXPECT_EQ(c.select(1, sdn, 0, 10), 0);
    c.note_lowering(1, 1e-3);
    c.lowering_failed(1e-3);
    c.note_lowering(1, 1e-3);
    c.lowering_failed(1e-3);
    EXPECT_EQ(c.select(1, sdn, 0, 10), 1);
    // SDN(3) above SDN(1) and SDN(2): both listings lower 2 → 1 (Listing 3.1 would go on to 0)
    EXPECT_EQ(c.select(2, mct::ScaledDerivativeNorms::from_values({1.0, 1.0, 2.0, 5.0}), 0, 10), 1);
    EXPECT_EQ(c.select(3, sdn, 4, 10), 1);  // N_fail > 3
  }
}

// Only κ = 1 → 0 is checked: at κ ≥ 2 the parasitic root on a slaved coupling variable is
// outside the unit circle, and lowering is right. The fixed strategy is never checked.
TEST(OrderChangeCheck, OnlyLoweringsFromKappaOneAreChecked) {
  mct::OrderController c;
  for (int kappa = 2; kappa <= mct::kMaxKappa; ++kappa) {
    c.note_lowering(kappa, 1e-3);
    EXPECT_FALSE(c.lowering_pending()) << kappa;
  }
  mct::OrderController fixed({mct::OrderStrategy::kFixed, 2});
  fixed.note_lowering(1, 1e-3);
  EXPECT_FALSE(fixed.lowering_pending());
}

// The controller end to end: κ rises to 1 on a linear u, the zigzag makes Listing 3.2 lower it,
// the attempt at κ = 0 fails. The first time, Listing 3.2 goes on at κ = 0; after the second
// such lowering the controller returns to κ = 1 with a smaller step, and the next lowering
// waits four accepted steps, the one after it eight (κ_max = 1: no raises between).
TEST(OrderChangeCheck, TheControllerReturnsToTheDegreeARefutedLoweringLeft) {
  mct::MacroStepController c(check_options(1), std::vector<double>{0.0});
  ZigzagU u;
  auto reach = [&](int kappa, bool zigzag) {
    u.zigzag = zigzag;
    for (int i = 0; i < 20 && c.plan().kappa != kappa; ++i) complete_with(c, kSmall, u);
    ASSERT_EQ(c.plan().kappa, kappa);
  };
  reach(1, false);
  reach(0, true);
  const mct::StepVerdict first = complete_with(c, kFails, u);
  EXPECT_NE(first.source, mct::FactorSource::kLoweringRefuted);
  EXPECT_EQ(first.kappa_next, 0);
  reach(1, false);
  reach(0, true);
  for (int hold : {4, 8}) {
    ASSERT_EQ(c.plan().kappa, 0);
    const double h_failed = c.plan().h();
    const mct::StepVerdict v = complete_with(c, kFails, u);
    EXPECT_FALSE(v.accepted);
    EXPECT_EQ(v.source, mct::FactorSource::kLoweringRefuted);
    EXPECT_EQ(v.kappa_next, 1);
    EXPECT_LE(c.plan().h(), 0.9 * h_failed * (1.0 + 1e-12));
    EXPECT_GE(c.plan().h(), 0.25 * h_failed * (1.0 - 1e-12));
    for (int i = 1; i < hold; ++i) {
      EXPECT_EQ(complete_with(c, kSmall, u).kappa_next, 1) << "hold " << hold << ", step " << i;
    }
    EXPECT_EQ(complete_with(c, kSmall, u).kappa_next, 0) << "the hold of " << hold << " is over";
  }
}

// A corrector failure in between says nothing about the degree: no refutation follows.
TEST(OrderChangeCheck, AFailureAtTheLoweredDegreeAfterACorrectorFailureIsNotARefutation) {
  mct::MacroStepController c(check_options(1), std::vector<double>{0.0});
  ZigzagU u;
  for (int i = 0; i < 10 && c.plan().kappa < 1; ++i) complete_with(c, kSmall, u);
  u.zigzag = true;
  for (int i = 0; i < 10 && c.plan().kappa == 1; ++i) complete_with(c, kSmall, u);
  ASSERT_EQ(c.plan().kappa, 0);
  std::vector<double> next = {0.0};
  const mct::StepVerdict failed = c.complete({mct::ErrorEstimate::none(), true, next});
  EXPECT_EQ(failed.source, mct::FactorSource::kCorrectorFailure);
  EXPECT_EQ(failed.kappa_next, 0);
  const mct::StepVerdict v = complete_with(c, kFails, u);
  EXPECT_NE(v.source, mct::FactorSource::kLoweringRefuted);
  EXPECT_EQ(v.kappa_next, 0);
}

// In explicit steps (an explicit estimator) lowerings are not checked.
TEST(OrderChangeCheck, ExplicitStepsAreNotChecked) {
  mct::MacroStepOptions o = check_options(1);
  o.estimator = mct::Estimator::kExCV;
  mct::MacroStepController c(o, std::vector<double>{0.0});
  ZigzagU u;
  for (int round = 0; round < 3; ++round) {
    u.zigzag = false;
    for (int i = 0; i < 20 && c.plan().kappa != 1; ++i) complete_with(c, kSmall, u);
    u.zigzag = true;
    for (int i = 0; i < 20 && c.plan().kappa != 0; ++i) complete_with(c, kSmall, u);
    ASSERT_EQ(c.plan().kappa, 0);
    EXPECT_NE(complete_with(c, kFails, u).source, mct::FactorSource::kLoweringRefuted);
  }
}

// Scheme auto plans with the user's explicit estimator and takes its implicit form in iterative
// steps (StepOutcome::estimator): those lowerings are checked like an implicit plan's.
TEST(OrderChangeCheck, IterativeStepsOfAnExplicitPlanAreChecked) {
  mct::MacroStepOptions o = check_options(1);
  o.estimator = mct::Estimator::kExCV;
  mct::MacroStepController c(o, std::vector<double>{0.0});
  ZigzagU u;
  const auto iterative = [&](double estimate) {
    std::vector<double> next = {u(c.plan().t_end)};
    mct::StepOutcome so{mct::ErrorEstimate::coupling_variables(estimate), false, next};
    so.estimator = mct::Estimator::kImCV;
    return c.complete(so);
  };
  bool refuted = false;
  for (int round = 0; round < 2; ++round) {
    u.zigzag = false;
    for (int i = 0; i < 20 && c.plan().kappa != 1; ++i) iterative(kSmall);
    u.zigzag = true;
    for (int i = 0; i < 20 && c.plan().kappa != 0; ++i) iterative(kSmall);
    ASSERT_EQ(c.plan().kappa, 0);
    refuted = iterative(kFails).source == mct::FactorSource::kLoweringRefuted;
  }
  EXPECT_TRUE(refuted) << "the second failed lowering in a row refutes it";
}
