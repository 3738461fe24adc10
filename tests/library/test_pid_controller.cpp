// PidController: PI/PID with output limits and back-calculation anti-windup (seed 003 §2.5,
// a control subsystem with an algebraic output).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "macrostep/library/pid_controller.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::PidController;
using library::PidParameters;

PidParameters pid(double kd, double lag) {
  PidParameters p;
  p.kp = 4.0;
  p.ki = 30.0;
  p.kd = kd;
  p.derivative_filter_time = 0.01;
  p.tracking_time = 0.05;
  p.output_min = -10.0;
  p.output_max = 10.0;
  p.output_lag = lag;
  p.setpoint_input = true;
  p.integral0 = 1.0;
  p.derivative_filter0 = 0.5;
  p.command0 = 2.0;
  return p;
}

// Inside the limits, above and below them (away from the kinks), PI / PID / with lag.
TEST(PidController, JacobianMatchesFiniteDifferences) {
  for (double kd : {0.0, 0.2}) {
    for (double lag : {0.0, 0.002}) {
      const PidController controller(pid(kd, lag));
      const std::size_t n = controller.state_size();
      for (double measured : {0.9, -5.0, 6.0}) {  // e = 1 − measured: 0.1, 6, −5
        testing::SubsystemPoint at;
        at.z = {1.2, 0.3, 4.0};
        at.zp = {3.0, -2.0, 7.0};
        at.z.resize(n);
        at.zp.resize(n);
        at.u = {measured, 1.0};
        for (double cj : {1.0, 5.0e3}) {
          testing::expect_jacobian_matches_central_differences(controller, at, cj);
        }
      }
    }
  }
}

TEST(PidController, InitialStateIsConsistentAndComesFromTheParameters) {
  for (double kd : {0.0, 0.2}) {
    for (double lag : {0.0, 0.002}) {
      const PidController controller(pid(kd, lag));
      testing::expect_consistent_initial_state(controller, {0.25, 1.0}, 1e-12);
      testing::expect_consistent_initial_state(controller, {-40.0, 3.0}, 1e-12);
      std::vector<double> a(controller.state_size()), b(a), ap(a), bp(a);
      controller.initial_state(std::vector<double>{0.25, 1.0}, a, ap);
      controller.initial_state(std::vector<double>{-40.0, 3.0}, b, bp);
      EXPECT_EQ(a, b);
      EXPECT_EQ(a[0], 1.0);
    }
  }
}

// Feed-through (MODELS.md §1.1: y depends on u directly) exactly when the output is algebraic and
// a proportional or derivative part acts; the output then moves with the measured value.
TEST(PidController, FeedThroughAndStateLayout) {
  PidParameters p = pid(0.2, 0.0);
  const PidController with_d(p);
  EXPECT_TRUE(with_d.has_feedthrough());
  EXPECT_EQ(with_d.state_size(), 2u);
  EXPECT_EQ(with_d.state_name(1), "derivative_filter");
  std::vector<double> y1(1), y2(1);
  const std::vector<double> z = {1.0, 0.5};
  with_d.outputs(0.0, z, std::vector<double>{0.9, 1.0}, y1);
  with_d.outputs(0.0, z, std::vector<double>{0.8, 1.0}, y2);
  // v = kp·e + q + kd·(e − w)/T_f: e = 0.1 → 0.4 + 1 + 20·(−0.4) = −6.6; e = 0.2 → 0.8 + 1 +
  // 20·(−0.3) = −4.2.
  EXPECT_NEAR(y1[0], -6.6, 1e-12);
  EXPECT_NEAR(y2[0], -4.2, 1e-12);
  p.kp = 0.0;
  p.kd = 0.0;
  const PidController integral_only(p);
  EXPECT_FALSE(integral_only.has_feedthrough());
  const PidController lagged(pid(0.2, 0.01));
  EXPECT_FALSE(lagged.has_feedthrough());
  EXPECT_EQ(lagged.state_size(), 3u);
  EXPECT_EQ(lagged.state_name(2), "command");
  lagged.outputs(0.0, std::vector<double>{1.0, 0.5, 3.5}, std::vector<double>{-100.0, 1.0}, y1);
  EXPECT_EQ(y1[0], 3.5);
  EXPECT_EQ(lagged.input_name(1), "setpoint");
  p.setpoint_input = false;
  EXPECT_EQ(PidController(p).input_size(), 1u);
  // Saturated output (e = 6: v = 24 + 1 → 10).
  const PidController pi(pid(0.0, 0.0));
  pi.outputs(0.0, std::vector<double>{1.0}, std::vector<double>{-5.0, 1.0}, y1);
  EXPECT_EQ(y1[0], 10.0);
}

// Saturated PI with a constant error e > 0, integrated by IDA: with back-calculation the integral
// part relaxes as q(t) = q∞ + (q0 − q∞)·exp(−t/T_t), q∞ = u_max − K_p·e + K_i·e·T_t, while the
// output stays at u_max; without anti-windup (T_t = ∞) it winds up linearly, q = q0 + K_i·e·t.
TEST(PidController, AntiWindupMatchesTheClosedForm) {
  PidParameters p = pid(0.0, 0.0);
  p.integral0 = 12.0;                                      // v0 = 4·2 + 12 = 20 > u_max
  const testing::ConstantInput error_of_two({-1.0, 1.0});  // e = 2
  const std::vector<double> times = {0.01, 0.05, 0.2, 0.5};
  const double e = 2.0, q_end = 10.0 - 4.0 * e + 30.0 * e * 0.05;
  const PidController controller(p);
  const auto states = testing::integrate_states(controller, error_of_two, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double q = q_end + (12.0 - q_end) * std::exp(-times[k] / 0.05);
    EXPECT_NEAR(states[k][0], q, 1e-8);
    std::vector<double> y(1);
    controller.outputs(times[k], states[k], std::vector<double>{-1.0, 1.0}, y);
    EXPECT_EQ(y[0], 10.0);
  }
  p.tracking_time = std::numeric_limits<double>::infinity();
  const auto wound = testing::integrate_states(PidController(p), error_of_two, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_NEAR(wound[k][0], 12.0 + 30.0 * e * times[k], 1e-8);
  }
}

// A ramp error e(t) = α·t through the filtered derivative: D(t) = K_d·α·(1 − exp(−t/T_f)) from
// w0 = 0 (closed form of K_d·s/(1 + T_f·s) on a ramp); and the actuator lag T_a·ċ = sat(v) − c
// towards a constant command: c(t) = v + (c0 − v)·exp(−t/T_a).
TEST(PidController, DerivativeFilterAndLagMatchTheClosedForms) {
  class Ramp final : public model::InputFunction {
   public:
    void evaluate(double t, std::span<double> u) const override {
      u[0] = -3.0 * t;  // measured; setpoint 0 → e = 3t
      u[1] = 0.0;
    }
  };
  PidParameters p;
  p.kd = 0.2;
  p.derivative_filter_time = 0.01;
  p.setpoint_input = true;
  const PidController derivative(p);
  const Ramp ramp;
  const std::vector<double> times = {0.002, 0.01, 0.03, 0.1};
  const auto states = testing::integrate_states(derivative, ramp, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    std::vector<double> y(1), u(2);
    ramp.evaluate(times[k], u);
    derivative.outputs(times[k], states[k], u, y);
    EXPECT_NEAR(y[0], 0.2 * 3.0 * (1.0 - std::exp(-times[k] / 0.01)), 1e-7);
  }

  PidParameters lagged;
  lagged.kp = 2.0;
  lagged.output_lag = 0.02;
  lagged.output_max = 5.0;
  lagged.command0 = -1.0;
  lagged.setpoint = 4.0;  // measured 0: e = 4, v = 8, sat(v) = 5
  const testing::ConstantInput zero({0.0});
  const auto lag_states = testing::integrate_states(PidController(lagged), zero, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_NEAR(lag_states[k][1], 5.0 + (-1.0 - 5.0) * std::exp(-times[k] / 0.02), 1e-8);
  }
}

// The controller keeps model::Subsystem's finite-difference defaults for the coupling Jacobians:
// by hand, unsaturated PI without anti-windup, F_q = q' − K_i·(r − m): ∂F_q/∂m = K_i,
// ∂F_q/∂r = −K_i; y = K_p·(r − m) + q: ∂y/∂q = 1.
TEST(PidController, DefaultCouplingJacobiansByHand) {
  PidParameters p;
  p.kp = 4.0;
  p.ki = 30.0;
  p.setpoint_input = true;
  const PidController pi(p);
  const auto input_pattern = pi.input_jacobian_pattern();
  ASSERT_EQ(input_pattern.nonzeros(), 2u);  // dense: 1 state × 2 inputs
  std::vector<double> du(2), dy(1);
  pi.input_jacobian(0.0, std::vector<double>{0.5}, std::vector<double>{1.0},
                    std::vector<double>{2.0, 3.0}, du);
  EXPECT_NEAR(du[0], 30.0, 1e-6);
  EXPECT_NEAR(du[1], -30.0, 1e-6);
  pi.output_jacobian(0.0, std::vector<double>{0.5}, std::vector<double>{2.0, 3.0}, dy);
  EXPECT_NEAR(dy[0], 1.0, 1e-8);
}

TEST(PidController, RejectsInvalidParameters) {
  PidParameters p = pid(0.2, 0.0);
  p.derivative_filter_time = 0.0;
  EXPECT_THROW(PidController{p}, std::invalid_argument);
  p = pid(0.0, 0.0);
  p.tracking_time = 0.0;
  EXPECT_THROW(PidController{p}, std::invalid_argument);
  p = pid(0.0, 0.0);
  p.output_min = 11.0;
  EXPECT_THROW(PidController{p}, std::invalid_argument);
  p = pid(0.0, -1.0);
  EXPECT_THROW(PidController{p}, std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
