// Start-up procedures (METHODS §6.5; seed 000 §3.4, §5.1 Listing 5.1; D-32, D-34).
#include "macrostep/control/startup.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace mct = macrostep::control;

// seed 000 §3.4 / D-32: each accepted step raises κ by one and doubles H until κ_max.
TEST(VariableStart, RaisesKappaAndDoublesUntilKappaMax) {
  mct::VariableStartPhase phase;
  int kappa = 0;
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(phase.active());
    const auto d = phase.after_accepted_step(kappa, kappa, 1.0, 5, step + 2);
    EXPECT_EQ(d.kappa, kappa + 1);
    EXPECT_EQ(d.r, 2.0);
    EXPECT_EQ(d.in_phase, kappa + 1 < 5);
    kappa = d.kappa;
  }
  EXPECT_FALSE(phase.active());
  const auto after = phase.after_accepted_step(5, 4, 0.7, 5, 9);  // normal values from now on
  EXPECT_EQ(after.kappa, 4);
  EXPECT_EQ(after.r, 0.7);
}

// D-32: the phase ends on κ_new < κ, on r < 1 and on a failure; the normal values are used.
TEST(VariableStart, EndsOnReductionOrFailure) {
  {
    mct::VariableStartPhase p;
    const auto d = p.after_accepted_step(2, 1, 1.5, 5, 4);
    EXPECT_EQ(d.kappa, 1);
    EXPECT_EQ(d.r, 1.5);
    EXPECT_FALSE(p.active());
  }
  {
    mct::VariableStartPhase p;
    const auto d = p.after_accepted_step(2, 2, 0.8, 5, 4);
    EXPECT_EQ(d.kappa, 2);
    EXPECT_EQ(d.r, 0.8);
    EXPECT_FALSE(p.active());
  }
  {
    mct::VariableStartPhase p;
    p.after_failed_step();
    EXPECT_FALSE(p.active());
  }
  {
    mct::VariableStartPhase p(false);
    const auto d = p.after_accepted_step(0, 0, 1.0, 5, 2);
    EXPECT_EQ(d.kappa, 0);
    EXPECT_EQ(d.r, 1.0);
  }
}

// D-31 inside the phase: κ ≤ n_hist − 1 (doubling continues).
TEST(VariableStart, HistoryCapsTheRaise) {
  mct::VariableStartPhase p;
  const auto d = p.after_accepted_step(2, 2, 1.0, 5, 3);
  EXPECT_EQ(d.kappa, 2);
  EXPECT_EQ(d.r, 2.0);
  EXPECT_TRUE(p.active());
}

// Listing 5.1 / D-34: H_red = 1e-5·H·2^n until T reaches 2H exactly (18 steps), then H. The
// ramp points are T_n = 1e-5·H·(2^n − 1) (sum of the doubled steps), computed here in closed
// form, independent of the step-by-step code.
TEST(FixedStart, Listing51Ramp) {
  const double H = 1e-3;
  double t = 0.0;
  long n = 0;
  while (t < 2.0 * H) {
    const double next = mct::fixed_step_ramp_end(t, H, n, 0.0);
    if (n < 17) {
      const double h_red = 1e-5 * H * std::ldexp(1.0, static_cast<int>(n));
      EXPECT_NEAR(next - t, h_red, 1e-12 * h_red) << n;
      const double closed = 1e-5 * H * (std::ldexp(1.0, static_cast<int>(n) + 1) - 1.0);
      EXPECT_NEAR(next, closed, 1e-14 * closed) << n;
    } else {
      EXPECT_EQ(next, 2.0 * H) << "the tentative end beyond 2H is clipped to 2H";
      EXPECT_GT(t + 1e-5 * H * std::ldexp(1.0, static_cast<int>(n)), 2.0 * H);  // tentative
    }
    t = next;
    ++n;
    ASSERT_LT(n, 100);
  }
  EXPECT_EQ(n, 18);
  EXPECT_EQ(t, 2.0 * H);
  for (int k = 3; k < 10; ++k) {
    t = mct::fixed_step_ramp_end(t, H, n++, 0.0);
    EXPECT_NEAR(t, k * H, 1e-18);
  }
}

// D-34: Listing 5.1 measures time from T_0 (0 in the spec; any T_0 here).
TEST(FixedStart, TimeIsMeasuredFromT0) {
  const double H = 0.1, t0 = 5.0;
  EXPECT_DOUBLE_EQ(mct::fixed_step_ramp_end(t0, H, 0, t0), t0 + 1e-6);
  EXPECT_DOUBLE_EQ(mct::fixed_step_ramp_end(t0 + 2 * H, H, 18, t0), t0 + 3 * H);
  EXPECT_DOUBLE_EQ(mct::fixed_step_grid_end(t0, H, t0), t0 + H);
  EXPECT_DOUBLE_EQ(mct::fixed_step_grid_end(t0 + 0.3, H, t0), t0 + 0.4);
  EXPECT_THROW(mct::fixed_step_ramp_end(t0 - 1.0, H, 0, t0), std::invalid_argument);
}
