// DcMotor: a DC motor behind an ideal gearbox (the drive train's electric motor and gear
// ratio), checked against its analytic Jacobians' finite differences and the closed-form steady
// state of L·i' = V − R·i − k·ω, J·ω' = k·i − b·ω + τ/n.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "macrostep/library/dc_motor.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::DcMotor;
using library::DcMotorParameters;

DcMotorParameters motor(double ratio) {
  DcMotorParameters p;
  p.resistance = 1.0;
  p.inductance = 1e-3;
  p.torque_constant = 0.1;
  p.inertia = 1e-3;
  p.damping = 1e-4;
  p.gear_ratio = ratio;
  p.current0 = 0.5;
  p.speed0 = 2.0;
  return p;
}

TEST(DcMotor, JacobiansMatchFiniteDifferencesAndTheInitialStateIsConsistent) {
  for (double ratio : {1.0, 4.0}) {
    const DcMotor m(motor(ratio));
    testing::SubsystemPoint at;
    at.z = {1.5, 0.3, 40.0};
    at.zp = {20.0, 40.0, -7.0};
    at.u = {12.0, -0.2};
    for (double cj : {1.0, 5.0e3}) testing::expect_jacobian_matches_central_differences(m, at, cj);
    testing::expect_coupling_jacobians_match_differences(m, at);
    testing::expect_consistent_initial_state(m, {12.0, -0.2}, 1e-12);
  }
}

// Steady state, free and loaded: ω = (k·V + R·τ/n)/(k² + R·b) at the rotor, i = (V − k·ω)/R; the
// outputs are the gearbox side, ω/n. Time constants here: L/R = 1 ms and J·R/(k² + R·b) ≈ 99 ms,
// so 2 s is twenty of them.
TEST(DcMotor, SteadyStateAndGearMatchTheClosedForm) {
  const double k = 0.1, r = 1.0, b = 1e-4, v = 12.0;
  for (double ratio : {1.0, 4.0}) {
    for (double tau : {0.0, -0.2}) {
      SCOPED_TRACE("ratio " + std::to_string(ratio) + ", load " + std::to_string(tau));
      const DcMotor m(motor(ratio));
      const testing::ConstantInput input({v, tau});
      const auto states = testing::integrate_states(m, input, {2.0});
      const double omega = (k * v + r * tau / ratio) / (k * k + r * b);
      const double current = (v - k * omega) / r;
      EXPECT_NEAR(states[0][2], omega, 1e-6 * omega);
      EXPECT_NEAR(states[0][0], current, 1e-6 * std::abs(current) + 1e-9);
      std::vector<double> y(3);
      m.outputs(2.0, states[0], std::vector<double>{v, tau}, y);
      EXPECT_NEAR(y[1], omega / ratio, 1e-6 * omega / ratio);
      EXPECT_EQ(y[2], states[0][0]);
    }
  }
}

TEST(DcMotor, RejectsInvalidParametersAndNamesItsVariables) {
  for (auto bad : {&DcMotorParameters::resistance, &DcMotorParameters::inductance,
                   &DcMotorParameters::torque_constant, &DcMotorParameters::inertia}) {
    DcMotorParameters p = motor(1.0);
    p.*bad = 0.0;
    EXPECT_THROW(DcMotor{p}, std::invalid_argument);
  }
  DcMotorParameters p = motor(1.0);
  p.gear_ratio = 0.5;
  EXPECT_THROW(DcMotor{p}, std::invalid_argument);
  p = motor(1.0);
  p.damping = -1.0;
  EXPECT_THROW(DcMotor{p}, std::invalid_argument);
  p = motor(1.0);
  p.right_coupled = false;
  const DcMotor free(p);
  EXPECT_EQ(free.input_size(), 1u);
  EXPECT_EQ(free.input_name(0), "voltage");
  EXPECT_EQ(DcMotor(motor(2.0)).input_name(1), "tau_right");
  EXPECT_EQ(free.output_name(1), "omega");
}

}  // namespace
}  // namespace macrostep
