// MacroStepController: the controlled macro step of METHODS §6.4 with start-up (§6.5), error
// test (§6.1), step size (§6.2, Listing 3.3) and order control (§6.3).
#include "macrostep/control/macro_step_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "macrostep/polynomials/builders.hpp"

namespace mp = macrostep::polynomials;
namespace mct = macrostep::control;

namespace {

mct::MacroStepOptions variable_options(double h, double t_end,
                                       mct::Estimator e = mct::Estimator::kExCV) {
  mct::MacroStepOptions o;
  o.mode = mct::StepSizeMode::kVariable;
  o.h = h;
  o.t_end = t_end;
  o.estimator = e;
  return o;
}

// Completes the current attempt with the given estimate and u_{N+1} = u(T_{N+1}).
template <class U>
mct::StepVerdict complete(mct::MacroStepController& c, mct::ErrorEstimate est, U u) {
  const double t = c.plan().t_end;
  std::vector<double> next = {u(t)};
  return c.complete({est, false, next});
}

double smooth_u(double t) {
  return std::exp(t);
}
const mct::ErrorEstimate kTiny = mct::ErrorEstimate::coupling_variables(1e-12);

}  // namespace

// Listing 5.1 + "κ rises by one per step to the target" in fixed-H mode (exH), ending exactly
// at t_end; every attempt is accepted.
TEST(MacroStepController, FixedModeFollowsListing51) {
  mct::MacroStepOptions o;
  o.mode = mct::StepSizeMode::kFixed;
  o.estimator = mct::Estimator::kNone;
  o.h = 1e-3;
  o.t_end = 0.01;
  o.kappa_fixed = 2;
  const std::vector<double> u0 = {1.0};
  mct::MacroStepController c(o, u0);
  std::vector<double> ends;
  std::vector<int> kappas;
  while (!c.finished()) {
    const mct::StepPlan p = c.plan();
    EXPECT_EQ(p.t_begin, c.history().newest_time());
    EXPECT_EQ(p.estimator, mct::Estimator::kNone);
    ends.push_back(p.t_end);
    kappas.push_back(p.kappa);
    const auto v = complete(c, mct::ErrorEstimate::none(), smooth_u);
    EXPECT_TRUE(v.accepted);
  }
  ASSERT_EQ(ends.size(), 18u + 8u);  // ramp to 2H, then 8 steps of H to 10H
  for (std::size_t n = 0; n < 17; ++n) {
    EXPECT_NEAR(ends[n], 1e-8 * (std::ldexp(1.0, static_cast<int>(n) + 1) - 1.0), 1e-18);
  }
  EXPECT_EQ(ends[17], 2e-3);
  for (std::size_t k = 18; k < ends.size(); ++k) {
    EXPECT_NEAR(ends[k], 1e-3 * static_cast<double>(k - 15), 1e-17);
  }
  EXPECT_EQ(ends.back(), 0.01);
  EXPECT_EQ(kappas[0], 0);
  EXPECT_EQ(kappas[1], 1);
  for (std::size_t k = 2; k < kappas.size(); ++k) EXPECT_EQ(kappas[k], 2);
  EXPECT_EQ(c.statistics().accepted, ends.size());
  EXPECT_EQ(c.statistics().rejected, 0u);
  EXPECT_THROW(c.plan(), std::logic_error);
}

// METHODS §6.5 fixed H without Listing 5.1: grid T_0 + k·H, κ rising by one to the target.
TEST(MacroStepController, FixedModeWithoutRampUsesTheGrid) {
  mct::MacroStepOptions o;
  o.mode = mct::StepSizeMode::kFixed;
  o.estimator = mct::Estimator::kNone;
  o.h = 0.1;
  o.t_end = 1.0;
  o.kappa_fixed = 3;
  o.fixed_start_ramp = false;
  mct::MacroStepController c(o, std::vector<double>{0.0});
  int k = 0;
  while (!c.finished()) {
    EXPECT_NEAR(c.plan().t_end, 0.1 * (k + 1), 1e-15);
    EXPECT_EQ(c.plan().kappa, std::min(k, 3));
    complete(c, mct::ErrorEstimate::none(), smooth_u);
    ++k;
  }
  EXPECT_EQ(k, 10);
  EXPECT_EQ(c.history().newest_time(), 1.0);
}

// seed 000 §3.4 / D-32 with D-33: H doubles and κ rises per accepted step until κ_max; the
// concept-1 estimator falls back to exCV until κ+2 points exist; then normal control (r_max).
// The coupling variable varies slowly on the scale of H (SDN decrease by ≈ 0.1·H per order), so
// order control has no reason to lower κ once SDN(κ+1) becomes available.
TEST(MacroStepController, VariableStartDoublesUntilKappaMax) {
  mct::MacroStepController c(variable_options(0.05, 100.0, mct::Estimator::kExMD),
                             std::vector<double>{1.0});
  auto slow = [](double t) { return std::exp(0.1 * t); };
  for (int k = 0; k <= 5; ++k) {
    const mct::StepPlan p = c.plan();
    EXPECT_EQ(p.kappa, k);
    EXPECT_NEAR(p.h(), 0.05 * std::ldexp(1.0, k), 1e-14) << k;
    EXPECT_EQ(p.estimator, mct::Estimator::kExCV) << "D-33 while history < kappa+2";
    EXPECT_EQ(c.in_start_phase(), k < 5);
    const auto v = complete(c, kTiny, slow);
    EXPECT_TRUE(v.accepted);
    EXPECT_EQ(v.source, k < 5 ? mct::FactorSource::kStartUp : mct::FactorSource::kAPosteriori);
  }
  // Phase over: κ = κ_max, H grows by r_max = 1.5 (tiny estimate), estimator is exMD again.
  const mct::StepPlan p = c.plan();
  EXPECT_EQ(p.kappa, 5);
  EXPECT_NEAR(p.h(), 1.5 * 1.6, 1e-13);
  EXPECT_EQ(p.estimator, mct::Estimator::kExMD);
  EXPECT_FALSE(c.in_start_phase());
}

// D-32: an acceptance that asks for r < 1 ends the phase with the normal factor (Eq. 3.27,
// exponent 1/(κ+1) for exCV) and the normal κ.
TEST(MacroStepController, VariableStartEndsOnReduction) {
  mct::MacroStepController c(variable_options(1e-4, 10.0), std::vector<double>{1.0});
  complete(c, kTiny, smooth_u);
  complete(c, kTiny, smooth_u);
  ASSERT_EQ(c.plan().kappa, 2);
  const double h = c.plan().h();
  const auto v = complete(c, mct::ErrorEstimate::coupling_variables(0.5), smooth_u);
  EXPECT_TRUE(v.accepted);
  EXPECT_FALSE(c.in_start_phase());
  EXPECT_EQ(v.source, mct::FactorSource::kAPosteriori);
  EXPECT_NEAR(v.r, std::pow(6.0 * 0.5, -1.0 / 3.0), 1e-15);
  EXPECT_EQ(c.plan().kappa, 2);
  EXPECT_NEAR(c.plan().h(), v.r * h, 1e-18);
}

// §6.4 rejection: the history is untouched, the same T_N is retried with the Listing 3.3
// factors (N_fail = 1: min(0.9, max(0.25, 0.9 r)); N_fail = 2: 0.25), attempt ids advance.
TEST(MacroStepController, RejectionRetriesFromTheSamePoint) {
  mct::MacroStepController c(variable_options(1e-3, 10.0), std::vector<double>{1.0});
  complete(c, kTiny, smooth_u);  // start-up step, history 2 points, κ = 1
  const mct::StepPlan p = c.plan();
  ASSERT_EQ(p.kappa, 1);
  const std::size_t n_hist = c.history().size();
  const auto v1 = complete(c, mct::ErrorEstimate::coupling_variables(1.5), smooth_u);
  EXPECT_FALSE(v1.accepted);
  EXPECT_FALSE(c.in_start_phase());
  EXPECT_EQ(c.history().size(), n_hist);
  const mct::StepPlan p1 = c.plan();
  EXPECT_EQ(p1.t_begin, p.t_begin);
  EXPECT_EQ(p1.step, p.step);
  EXPECT_EQ(p1.attempt, p.attempt + 1);
  EXPECT_EQ(p1.repeat, 1);
  const double r1 = std::min(0.9, std::max(0.25, 0.9 * std::pow(6.0 * 1.5, -1.0 / 2.0)));
  ASSERT_GT(r1, 0.25);  // the N_fail = 1 rule, not its floor
  EXPECT_NEAR(p1.h(), r1 * p.h(), 1e-17);
  const auto v2 = complete(c, mct::ErrorEstimate::coupling_variables(1.2), smooth_u);
  EXPECT_FALSE(v2.accepted);
  EXPECT_EQ(v2.r, 0.25);
  EXPECT_NEAR(c.plan().h(), 0.25 * p1.h(), 1e-17);
  EXPECT_EQ(c.plan().repeat, 2);
  const auto v3 = complete(c, mct::ErrorEstimate::coupling_variables(0.1), smooth_u);
  EXPECT_TRUE(v3.accepted);
  EXPECT_EQ(c.history().size(), n_hist + 1);
  EXPECT_EQ(c.plan().repeat, 0);
  EXPECT_EQ(c.statistics().rejected, 2u);
}

// Corrector failure: counted as a failure, r = 0.25 at once, κ only via the overrides.
TEST(MacroStepController, CorrectorFailure) {
  mct::MacroStepController c(variable_options(1e-3, 10.0, mct::Estimator::kImCV),
                             std::vector<double>{1.0});
  for (int i = 0; i < 4; ++i) complete(c, kTiny, smooth_u);
  const mct::StepPlan p = c.plan();
  ASSERT_EQ(p.kappa, 4);
  const std::size_t n_hist = c.history().size();
  const auto v = c.complete({mct::ErrorEstimate::none(), true, {}});
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.source, mct::FactorSource::kCorrectorFailure);
  EXPECT_EQ(v.r, 0.25);
  EXPECT_EQ(v.kappa_next, 4);
  EXPECT_EQ(c.history().size(), n_hist);
  EXPECT_EQ(c.statistics().corrector_failures, 1u);
  for (int i = 0; i < 3; ++i) c.complete({mct::ErrorEstimate::none(), true, {}});
  EXPECT_EQ(c.plan().kappa, 1);  // N_fail = 4 > 3
  for (int i = 0; i < 2; ++i) c.complete({mct::ErrorEstimate::none(), true, {}});
  EXPECT_EQ(c.plan().kappa, 0);  // N_fail = 6 > 5
}

// A subsystem that cannot integrate the step (D-26) is handled like a corrector failure and
// counted apart, so that the statistics tell the two causes apart.
TEST(MacroStepController, SubsystemFailureActsLikeACorrectorFailureAndIsCountedApart) {
  mct::MacroStepController c(variable_options(1e-3, 10.0, mct::Estimator::kExCV),
                             std::vector<double>{1.0});
  for (int i = 0; i < 4; ++i) complete(c, kTiny, smooth_u);
  const std::size_t n_hist = c.history().size();
  mct::StepOutcome failed;
  failed.subsystem_failed = true;
  const auto v = c.complete(failed);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.source, mct::FactorSource::kCorrectorFailure);
  EXPECT_EQ(v.r, 0.25);
  EXPECT_EQ(c.history().size(), n_hist);
  EXPECT_EQ(c.statistics().subsystem_failures, 1u);
  EXPECT_EQ(c.statistics().corrector_failures, 0u);
  EXPECT_EQ(c.statistics().rejected, 1u);
}

// D-27: persistent failures shrink H to H_min and abort with StepSizeUnderflow. H_min is
// 1e-22 s within 1e-8 s of t = 0 and 1e-14·max(1, |T|) elsewhere.
static int attempts_until_underflow(double t_start) {
  mct::MacroStepOptions o = variable_options(1e-3, t_start + 10.0);
  o.t_start = t_start;
  mct::MacroStepController c(o, std::vector<double>{1.0});
  int attempts = 0;
  try {
    for (;;) {
      ++attempts;
      complete(c, mct::ErrorEstimate::coupling_variables(5.0), smooth_u);
      if (attempts > 100) return -1;
    }
  } catch (const mct::StepSizeUnderflow&) {
    return attempts;
  }
}

TEST(MacroStepController, AbortsBelowHMin) {
  // 1e-3·0.9·0.25^k < 1e-22 ⇒ about 32 attempts at t = 0
  const int at_start = attempts_until_underflow(0.0);
  EXPECT_GT(at_start, 28);
  EXPECT_LT(at_start, 36);
  // 1e-3·0.9·0.25^k < 2e-14 ⇒ about 18 attempts at t = 2
  const int later = attempts_until_underflow(2.0);
  EXPECT_GT(later, 14);
  EXPECT_LT(later, 22);
}

// D-27: the last step is clipped to t_end; the run then finishes.
TEST(MacroStepController, ClipsToEndTime) {
  mct::MacroStepController c(variable_options(4e-4, 1e-3), std::vector<double>{1.0});
  complete(c, kTiny, smooth_u);
  EXPECT_EQ(c.plan().t_begin, 4e-4);
  EXPECT_EQ(c.plan().t_end, 1e-3);  // 4e-4 + 8e-4 clipped
  const auto v = complete(c, kTiny, smooth_u);
  EXPECT_TRUE(v.finished);
  EXPECT_TRUE(c.finished());
  EXPECT_EQ(c.history().newest_time(), 1e-3);
  EXPECT_THROW(c.complete({kTiny, false, {}}), std::logic_error);
}

// Eq. 3.26 / D-25: when order control changes κ, the factor comes from the a-priori estimate
// of the new degree at T_M + H with W^u at u_M; recomputed here from two Lagrange predictions.
TEST(MacroStepController, OrderChangeUsesAPrioriEstimate) {
  auto o = variable_options(1e-3, 10.0);
  o.variable_start = false;
  const double A = 5e4, B = 1e3;
  auto u = [&](double t) { return B * t + A * t * t; };
  mct::MacroStepController c(o, std::vector<double>{u(0.0)});
  complete(c, kTiny, u);  // κ 0, N_succ 1, raise needs SDN2 (3 points): skipped
  ASSERT_EQ(c.plan().kappa, 0);
  const double h = c.plan().h();
  const auto v = complete(c, kTiny, u);  // now SDN2 < SDN1/2 → κ = 1
  ASSERT_EQ(v.kappa_next, 1);
  EXPECT_EQ(v.source, mct::FactorSource::kAPriori);
  const auto& hist = c.history();
  const double t_next = hist.newest_time() + h;
  std::vector<double> hi(1), lo(1);
  mp::lagrange_prediction(hist, 2, t_next, hi);
  mp::lagrange_prediction(hist, 1, t_next, lo);
  const double w =
      1.0 / (o.tolerances.atol_u + o.tolerances.rtol * std::abs(hist.newest_values()[0]));
  const double r_raw = std::pow(6.0 * std::abs(hi[0] - lo[0]) * w, -1.0 / 2.0);
  ASSERT_LT(r_raw, 0.9);  // the chosen data put r in the unclamped shrink range
  ASSERT_GT(r_raw, 0.5);
  EXPECT_NEAR(v.r, r_raw, 1e-12);
  EXPECT_NEAR(c.plan().h(), r_raw * h, 1e-15);
}

// The composition on a coupling variable u(t) = sin(20t) + 0.5 with exCV (concept 2): the
// predictor error |u^pre − u(T_{N+1})| is the estimate. The run must reach t_end exactly, accept
// only steps that pass the test, use higher degrees, reject rarely (Γ = 6: 1–5 % in seed 000
// §5.3) and be deterministic.
TEST(MacroStepController, ControlledRunOnASmoothCouplingVariable) {
  auto run = [](std::vector<double>& times, std::vector<int>& kappas) {
    auto o = variable_options(1e-4, 1.0);
    o.tolerances = mct::ErrorTolerances::for_rtol(1e-6);
    auto f = [](double t) { return std::sin(20.0 * t) + 0.5; };
    mct::MacroStepController c(o, std::vector<double>{f(0.0)});
    std::vector<double> u_pre(1), u_new(1);
    while (!c.finished()) {
      const mct::StepPlan p = c.plan();
      mp::lagrange_prediction(c.history(), p.kappa, p.t_end, u_pre);
      u_new[0] = f(p.t_end);
      const auto est = mct::estimate_coupling_variables(u_pre, u_new, o.tolerances);
      const auto v = c.complete({est, false, u_new});
      EXPECT_EQ(v.accepted, est.norm() <= 1.0);
      if (v.accepted) {
        times.push_back(p.t_end);
        kappas.push_back(p.kappa);
      }
    }
    return c.statistics();
  };
  std::vector<double> t1, t2;
  std::vector<int> k1, k2;
  const auto s = run(t1, k1);
  run(t2, k2);
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(k1, k2);
  EXPECT_EQ(t1.back(), 1.0);
  EXPECT_LT(static_cast<double>(s.rejected), 0.1 * static_cast<double>(s.accepted));
  EXPECT_GE(*std::max_element(k1.begin(), k1.end()), 3);
  std::uint64_t total = 0;
  for (auto n : s.accepted_by_kappa) total += n;
  EXPECT_EQ(total, s.accepted);
}

// resume_step: the next plan takes the given H and κ (scheme auto entering a kind of step it
// ran before), κ capped by the history's points, their span and κ_max, H clipped to t_end; the
// start-up phase ends. Not in fixed mode, not once finished, not with an H below H_min or a
// negative κ.
TEST(MacroStepController, ResumeStepReplacesTheNextPlansStepAndDegree) {
  mct::MacroStepController c(variable_options(1e-3, 1.0), std::vector<double>{1.0});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(complete(c, kTiny, smooth_u).accepted);
  ASSERT_TRUE(c.in_start_phase());
  const double t = c.history().newest_time();
  c.resume_step(2.5e-3, 5);
  EXPECT_FALSE(c.in_start_phase());
  EXPECT_EQ(c.plan().t_begin, t);
  EXPECT_NEAR(c.plan().h(), 2.5e-3, 1e-15);
  EXPECT_EQ(c.plan().kappa, static_cast<int>(c.history().size()) - 1);  // 4 points: κ ≤ 3
  c.resume_step(1e-4, 0);
  EXPECT_NEAR(c.plan().h(), 1e-4, 1e-15);
  EXPECT_EQ(c.plan().kappa, 0);
  c.resume_step(10.0, 1);
  EXPECT_EQ(c.plan().t_end, 1.0);  // clipped to t_end
  EXPECT_EQ(c.plan().kappa, 0);    // the points, 7e-3 s apart at most, do not span H/4
  EXPECT_THROW(c.resume_step(std::nan(""), 0), std::invalid_argument);
  EXPECT_THROW(c.resume_step(0.0, 0), std::invalid_argument);
  EXPECT_THROW(c.resume_step(1e-3, -1), std::invalid_argument);
  while (!c.finished()) complete(c, kTiny, smooth_u);
  EXPECT_THROW(c.resume_step(1e-3, 0), std::logic_error);

  mct::MacroStepOptions fixed;
  fixed.mode = mct::StepSizeMode::kFixed;
  fixed.estimator = mct::Estimator::kNone;
  fixed.h = 1e-3;
  fixed.t_end = 0.01;
  mct::MacroStepController f(fixed, std::vector<double>{1.0});
  EXPECT_THROW(f.resume_step(1e-3, 0), std::logic_error);
}

// DESIGN contract 5: options and outcomes that do not fit the mode are reported, not guessed.
TEST(MacroStepController, RejectsInconsistentOptionsAndOutcomes) {
  auto o = variable_options(1e-3, 1.0, mct::Estimator::kNone);
  EXPECT_THROW(mct::MacroStepController(o, std::vector<double>{0.0}), std::invalid_argument);
  o = variable_options(0.0, 1.0);
  EXPECT_THROW(mct::MacroStepController(o, std::vector<double>{0.0}), std::invalid_argument);
  o = variable_options(1e-3, 0.0);
  EXPECT_THROW(mct::MacroStepController(o, std::vector<double>{0.0}), std::invalid_argument);
  o = variable_options(1e-3, 1.0);
  o.history_capacity = 4;
  EXPECT_THROW(mct::MacroStepController(o, std::vector<double>{0.0}), std::invalid_argument);
  mct::MacroStepController c(variable_options(1e-3, 1.0), std::vector<double>{0.0});
  EXPECT_THROW(c.complete({mct::ErrorEstimate::none(), false, {}}), std::invalid_argument);
  std::vector<double> two = {1.0, 2.0};
  EXPECT_THROW(c.complete({kTiny, false, two}), std::invalid_argument);
}

// Time events (METHODS §3.3): no plan steps over the event limit, also after a rejection; after
// the step that ends on the event a variable that jumped holds its new value over the history,
// the degree stays, and the next step is as long as the H the step had before the event
// shortened it; a fixed grid goes on at its next point.
TEST(MacroStepController, PlansEndOnTheEventLimitAndTheJumpIsHeldAfterIt) {
  mct::MacroStepController c(variable_options(1e-2, 1.0), std::vector<double>{1.0});
  for (int k = 0; k < 6; ++k) complete(c, kTiny, smooth_u);  // some history, κ above 0
  ASSERT_GT(c.plan().kappa, 0);
  const double t_m = c.plan().t_begin;
  const double h = c.plan().h();
  c.set_event_limit(t_m + 0.25 * h);
  EXPECT_EQ(c.plan().t_end, t_m + 0.25 * h);
  EXPECT_EQ(c.plan().h_before_event, h);
  // A rejection: the next attempt is shorter, and still no longer than to the event.
  EXPECT_FALSE(complete(c, mct::ErrorEstimate::coupling_variables(1e3), smooth_u).accepted);
  EXPECT_LE(c.plan().t_end, t_m + 0.25 * h);
  // A later limit: the plan is the one the controller wanted, clipped anew.
  c.set_event_limit(std::numeric_limits<double>::infinity());
  EXPECT_EQ(c.plan().h_before_event, 0.0);
  c.set_event_limit(t_m + 1e-3 * h);
  const mct::StepPlan clipped = c.plan();
  EXPECT_EQ(clipped.t_end, t_m + 1e-3 * h);
  ASSERT_TRUE(complete(c, kTiny, smooth_u).accepted);
  const std::size_t points = c.history().size();
  const int kappa = c.plan().kappa;
  const std::vector<double> after = {-5.0};
  c.jump_at_event(after, clipped.h_before_event);
  ASSERT_EQ(c.history().size(), points);
  EXPECT_EQ(c.history().newest_time(), clipped.t_end);
  for (std::size_t i = 0; i < points; ++i) EXPECT_EQ(c.history().values(i)[0], -5.0) << i;
  EXPECT_EQ(c.plan().kappa, kappa);
  EXPECT_EQ(c.plan().t_begin, clipped.t_end);
  EXPECT_GE(c.plan().h(), std::min(clipped.h_before_event, 1.0 - clipped.t_end));
  // An event within H_min of T_M is the subsystems' to take at their next start: ignored.
  c.set_event_limit(c.plan().t_begin);
  EXPECT_EQ(c.plan().h_before_event, 0.0);
  // The limit travels with the exported state.
  c.set_event_limit(c.plan().t_begin + 0.5 * c.plan().h());
  const mct::MacroStepController copy =
      mct::MacroStepController::import_state(c.options(), c.export_state(), 1);
  EXPECT_EQ(copy.event_limit(), c.event_limit());
  EXPECT_EQ(copy.plan().t_end, c.plan().t_end);
  EXPECT_EQ(copy.plan().h_before_event, c.plan().h_before_event);
  EXPECT_THROW(c.jump_at_event(std::vector<double>{1.0, 2.0}, 0.0), std::invalid_argument);
  EXPECT_THROW(c.set_event_limit(std::nan("")), std::invalid_argument);
}

TEST(MacroStepController, AFixedGridGoesOnAtItsNextPointAfterAnEvent) {
  mct::MacroStepOptions o;
  o.mode = mct::StepSizeMode::kFixed;
  o.estimator = mct::Estimator::kNone;
  o.fixed_start_ramp = false;
  o.h = 0.1;
  o.t_end = 0.5;
  o.kappa_fixed = 2;
  mct::MacroStepController c(o, std::vector<double>{0.0});
  c.set_event_limit(0.13);
  std::vector<double> ends;
  std::vector<int> kappas;
  while (!c.finished()) {
    ends.push_back(c.plan().t_end);
    kappas.push_back(c.plan().kappa);
    const mct::StepPlan p = c.plan();
    complete(c, mct::ErrorEstimate::none(), smooth_u);
    if (p.t_end == 0.13) c.jump_at_event(std::vector<double>{2.0}, p.h_before_event);
  }
  const std::vector<double> expected = {0.1, 0.13, 0.2, 0.30000000000000004, 0.4, 0.5};
  ASSERT_EQ(ends.size(), expected.size());
  for (std::size_t k = 0; k < ends.size(); ++k) EXPECT_NEAR(ends[k], expected[k], 1e-15) << k;
  EXPECT_EQ(kappas, (std::vector<int>{0, 1, 2, 2, 2, 2}));
  // The event's point served the step on to 0.2 only: the polynomials run through the grid.
  for (std::size_t i = 0; i < c.history().size(); ++i) {
    EXPECT_NEAR(c.history().time(i), 0.1 * static_cast<double>(i), 1e-15) << i;
  }
}

// Only the variables the event moved hold their value: the others keep their past.
TEST(MacroStepController, AJumpHoldsOnlyTheVariablesTheEventMoved) {
  mct::MacroStepController c(variable_options(1e-2, 1.0), std::vector<double>{1.0, 1.0});
  for (int k = 0; k < 4; ++k) {
    const double t = c.plan().t_end;
    const std::vector<double> u = {std::exp(t), std::exp(t)};
    ASSERT_TRUE(c.complete({kTiny, false, u}).accepted);
  }
  const std::vector<double> newest(c.history().newest_values().begin(),
                                   c.history().newest_values().end());
  const double second_oldest = c.history().values(0)[1];
  c.jump_at_event(std::vector<double>{newest[0] + 3.0, newest[1]}, 0.0);
  for (std::size_t i = 0; i < c.history().size(); ++i) {
    EXPECT_EQ(c.history().values(i)[0], newest[0] + 3.0) << i;
  }
  EXPECT_EQ(c.history().values(0)[1], second_oldest) << "the unmoved variable keeps its past";
}
