// Order control (METHODS §6.3; seed 000 §3.3, Listings 3.1 and 3.2; T8, D-28, D-29, D-31).
#include "macrostep/control/order.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "control_support.hpp"

namespace mct = macrostep::control;
namespace mt = macrostep::testing;

namespace {

using Sdn = mct::ScaledDerivativeNorms;

mct::OrderController controller(mct::OrderStrategy s, int successes = 0, int kappa_max = 5) {
  mct::OrderController c({s, kappa_max});
  for (int i = 0; i < successes; ++i) c.record_attempt(true, 1.0, 1);
  return c;
}

constexpr auto kIda = mct::OrderStrategy::kIdaLike;
constexpr auto kCons = mct::OrderStrategy::kConservative;
constexpr std::size_t kLongHistory = 16;

}  // namespace

// Listing 3.2, lowering block.
TEST(OrderIdaLike, LowersWhenNormsStopDecreasing) {
  const auto c = controller(kIda);
  // κ = 1: SDN1 ≤ SDN2/2 → 0, otherwise keep.
  EXPECT_EQ(c.select(1, Sdn::from_values({1, 1.0, 2.0}), 0, kLongHistory), 0);
  EXPECT_EQ(c.select(1, Sdn::from_values({1, 1.1, 2.0}), 0, kLongHistory), 1);
  // κ = 3: max(SDN3, SDN2) ≤ SDN4 → 2.
  EXPECT_EQ(c.select(3, Sdn::from_values({1, 8, 4, 2, 4}), 0, kLongHistory), 2);
  EXPECT_EQ(c.select(3, Sdn::from_values({1, 8, 4, 2, 3.9}), 0, kLongHistory), 3);
}

// Listing 3.2, raising block: only with N_succ > κ, and κ < κ_max.
TEST(OrderIdaLike, RaisesAfterEnoughSuccesses) {
  const auto decreasing = Sdn::from_values({1, 16, 8, 4, 2, 1});
  EXPECT_EQ(controller(kIda, 3).select(2, decreasing, 0, kLongHistory), 3);
  EXPECT_EQ(controller(kIda, 2).select(2, decreasing, 0, kLongHistory), 2);     // N_succ = κ
  EXPECT_EQ(controller(kIda, 9, 2).select(2, decreasing, 0, kLongHistory), 2);  // κ = κ_max
  // κ = 0: raise iff SDN2 < SDN1/2.
  EXPECT_EQ(controller(kIda, 1).select(0, Sdn::from_values({1, 1.0, 0.49}), 0, kLongHistory), 1);
  EXPECT_EQ(controller(kIda, 1).select(0, Sdn::from_values({1, 1.0, 0.5}), 0, kLongHistory), 0);
  // κ > 0 with SDNκ+2 ≥ SDNκ+1: keep.
  EXPECT_EQ(controller(kIda, 3).select(2, Sdn::from_values({1, 16, 8, 4, 5}), 0, kLongHistory), 2);
}

// Listing 3.2: the late lowering SDNκ ≤ min(SDNκ+1, SDNκ+2) inside the raise block.
TEST(OrderIdaLike, LateLoweringInsideTheRaiseBlock) {
  // max(SDN2, SDN1) = 5 > SDN3 = 3 (no early lowering), but SDN2 = 2 ≤ min(3, 4).
  const auto s = Sdn::from_values({1, 5, 2, 3, 4});
  EXPECT_EQ(controller(kIda, 3).select(2, s, 0, kLongHistory), 1);
  EXPECT_EQ(controller(kIda, 0).select(2, s, 0, kLongHistory), 2);  // block not entered
}

// Overrides N_fail > 3 → κ ≤ 1, N_fail > 5 → 0, applied unconditionally (T8).
TEST(OrderIdaLike, FailureOverrides) {
  const auto decreasing = Sdn::from_values({1, 16, 8, 4, 2, 1});
  const auto c = controller(kIda);
  EXPECT_EQ(c.select(3, decreasing, 3, kLongHistory), 3);
  EXPECT_EQ(c.select(3, decreasing, 4, kLongHistory), 1);
  EXPECT_EQ(c.select(3, decreasing, 6, kLongHistory), 0);
  EXPECT_EQ(c.select(0, decreasing, 4, kLongHistory), 0);
  // after an SDN lowering as well
  EXPECT_EQ(c.select(3, Sdn::from_values({1, 8, 4, 2, 4}), 4, kLongHistory), 1);
  EXPECT_EQ(c.overrides_only(4, 5, kLongHistory), 1);
  EXPECT_EQ(c.overrides_only(4, 3, kLongHistory), 4);
}

// D-29: tests with missing SDNs are skipped; D-31: κ ≤ n_hist − 1.
TEST(OrderIdaLike, ShortHistory) {
  const auto c = controller(kIda, 9);
  // κ = 2 with only SDN0..SDN2 (3 points): no lowering test possible, no raise.
  EXPECT_EQ(c.select(2, Sdn::from_values({1, 1, 5}), 0, 3), 2);
  // κ = 3 whose SDNs would keep it, but only 3 history points: capped to 2.
  EXPECT_EQ(c.select(3, Sdn::from_values({1, 16, 8, 4, 2, 1}), 0, 3), 2);
  // raise to 3 needs SDN4 — here 4 points give SDN0..SDN3 only: stays 2.
  EXPECT_EQ(c.select(2, Sdn::from_values({1, 16, 8, 4}), 0, 4), 2);
}

// Listing 3.1: lowering until SDN(κ+1) < … < SDN(1) holds; the IDA-like listing keeps κ on the
// same data (seed 000 §5.5: the conservative strategy detects the instability).
TEST(OrderConservative, LowersUntilStrictlyDecreasing) {
  const auto cons = controller(kCons);
  const auto ida = controller(kIda);
  const auto top_break = Sdn::from_values({1, 8, 4, 2, 3});  // SDN4 > SDN3
  EXPECT_EQ(cons.select(3, top_break, 0, kLongHistory), 2);
  const auto low_break = Sdn::from_values({1, 8, 9, 2, 1});  // SDN2 > SDN1
  EXPECT_EQ(cons.select(3, low_break, 0, kLongHistory), 0);
  EXPECT_EQ(ida.select(3, low_break, 0, kLongHistory), 3);
  const auto equal = Sdn::from_values({1, 4, 4});  // not strictly decreasing
  EXPECT_EQ(cons.select(1, equal, 0, kLongHistory), 0);
}

// Listing 3.1 raise: N_succ > κ and SDN(κ+2) < SDN(κ+1); overrides with N_fail > 5.
TEST(OrderConservative, RaisesOnlyAfterEnoughSuccesses) {
  const auto s = Sdn::from_values({1, 8, 4, 2});
  EXPECT_EQ(controller(kCons, 2).select(1, s, 0, kLongHistory), 2);
  EXPECT_EQ(controller(kCons, 1).select(1, s, 0, kLongHistory), 1);
  EXPECT_EQ(controller(kCons, 2).select(1, Sdn::from_values({1, 8, 4, 4}), 0, kLongHistory), 1);
  EXPECT_EQ(controller(kCons).select(3, Sdn::from_values({1, 16, 8, 4, 2}), 6, kLongHistory), 0);
}

// N_succ: consecutive accepted steps with unchanged κ and no H reduction.
TEST(OrderController, SuccessCounter) {
  mct::OrderController c;
  c.record_attempt(true, 1.0, 1);
  c.record_attempt(true, 1.0, 1);
  EXPECT_EQ(c.successes(), 2);
  c.record_decision(2, 2, 1.0);  // unchanged κ, r = 1: kept
  EXPECT_EQ(c.successes(), 2);
  c.record_decision(2, 2, 0.9);  // H reduced
  EXPECT_EQ(c.successes(), 0);
  c.record_attempt(true, 1.0, 1);
  c.record_decision(2, 3, 1.5);  // κ changed
  EXPECT_EQ(c.successes(), 0);
  c.record_attempt(true, 1.0, 1);
  c.record_attempt(false, 1.0, 1);  // failure
  EXPECT_EQ(c.successes(), 0);
}

// D-28: SDN(j) = ‖H^j·j!·u[T_M..T_{M−j}]‖ with W^u at u_M. For u = a·t² + b (one channel) the
// second divided difference is a, so SDN(2) = H²·2·|a|·W; SDN(3) vanishes; SDN(0) = |u_M|·W.
TEST(OrderController, ScaledDerivativeNorms) {
  const double a = 3.0, b = 5.0, H = 0.04;
  const auto t = mt::grid_ending_at(1.0, 0.05, mt::random_ratios(5, 2), 5);
  const auto hist = mt::history_from(t, 1, [&](std::size_t, double x) { return a * x * x + b; });
  mct::ErrorTolerances tol;  // atol_u = 1, rtol = 1e-4
  const double u_m = a + b, w = 1.0 / (1.0 + 1e-4 * u_m);
  const auto sdn = mct::scaled_derivative_norms(hist, H, 7, tol);
  EXPECT_EQ(sdn.highest(), 4);  // 5 points: SDN0..SDN4 (D-29)
  EXPECT_FALSE(sdn.available(5));
  EXPECT_NEAR(sdn[0], u_m * w, 1e-15);
  EXPECT_NEAR(sdn[2], H * H * 2.0 * a * w, 1e-13);
  EXPECT_NEAR(sdn[3], 0.0, 1e-10);
  EXPECT_NEAR(sdn[1],
              H *
                  std::abs((hist.values_back(0)[0] - hist.values_back(1)[0]) /
                           (hist.time_back(0) - hist.time_back(1))) *
                  w,
              1e-13);
  EXPECT_THROW(sdn[5], std::out_of_range);
  const auto capped = mct::scaled_derivative_norms(hist, H, 2, tol);
  EXPECT_EQ(capped.highest(), 2);
}

// Fixed degree with a variable step size (seed 000 §5.8 "fixed κ, variable H"): κ = target as
// soon as the history allows, whatever the norms say, and failures do not lower it.
TEST(OrderFixed, KeepsTheTargetDegree) {
  const auto c = controller(mct::OrderStrategy::kFixed, 0, 4);
  const auto rising = Sdn::from_values({1, 1, 2, 4, 8, 16});  // Listing 3.2 would lower
  EXPECT_EQ(c.select(4, rising, 0, kLongHistory), 4);
  EXPECT_EQ(c.select(2, rising, 0, kLongHistory), 4);
  EXPECT_EQ(c.select(1, rising, 0, 3), 2);  // history cap κ ≤ n_hist − 1 (D-31)
  EXPECT_EQ(c.overrides_only(4, 6, kLongHistory), 4);
  EXPECT_EQ(controller(kIda).overrides_only(4, 6, kLongHistory), 0);
}
