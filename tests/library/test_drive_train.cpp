// DriveTrainSegment: inertias and shafts (seed 003 §2.6, rotational mechanics J·φ̈ = Σ M).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "macrostep/library/drive_train.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::DriveTrainParameters;
using library::DriveTrainSegment;
using library::ElementLaw;
using library::LoadTorque;

// Four inertias, nonlinear shafts (cubic, e_x = 6, non-integer e_v), bearing damping, a
// constant load and a load step.
DriveTrainParameters four_inertias(bool left, bool right) {
  DriveTrainParameters p;
  p.inertia = {0.02, 0.5, 0.1, 1.5};
  p.shaft = {{2.0e3, 0.5, 4.0e4, 0.1, 3.0, 3.0},
             {8.0e3, 1.0, 1.0e6, 0.0, 6.0, 3.0},
             {5.0e2, 0.2, 0.0, 0.3, 3.0, 2.5}};
  p.bearing_damping = {0.01, 0.0, 0.05, 0.2};
  p.load = {LoadTorque{}, LoadTorque{-3.0, 0.0, 0.0, 1e-3}, LoadTorque{}, {-1.0, -20.0, 0.1, 0.01}};
  p.angle0 = {0.0, -0.01, 0.02, 0.05};
  p.speed0 = {100.0, 99.0, 101.5, 98.0};
  p.left_coupled = left;
  p.right_coupled = right;
  return p;
}

TEST(DriveTrainSegment, JacobianMatchesFiniteDifferences) {
  for (bool left : {false, true}) {
    for (bool right : {false, true}) {
      const DriveTrainSegment train(four_inertias(left, right));
      testing::SubsystemPoint at;
      at.t = 0.1;  // inside the load step
      at.z = {0.3, 100.0, 0.25, 99.0, 0.41, 102.0, 0.38, 97.0};
      at.zp = {100.0, 50.0, 99.0, -20.0, 102.0, 3.0, 97.0, 7.0};
      at.u.assign(train.input_size(), 12.5);
      for (double cj : {1.0, 3.0e3}) {
        testing::expect_jacobian_matches_central_differences(train, at, cj);
      }
    }
  }
  // One inertia (no shaft) with both ends coupled.
  DriveTrainParameters one;
  one.inertia = {0.3};
  one.bearing_damping = {0.4};
  one.angle0 = {0.0};
  one.speed0 = {1.0};
  const DriveTrainSegment single(one);
  testing::expect_jacobian_matches_central_differences(single,
                                                       {0.0, {0.2, 3.0}, {3.0, 1.0}, {1, 2}}, 10.0);
}

TEST(DriveTrainSegment, CouplingJacobiansMatchFiniteDifferences) {
  for (bool left : {false, true}) {
    for (bool right : {false, true}) {
      const DriveTrainSegment train(four_inertias(left, right));
      testing::SubsystemPoint at{0.1,
                                 {0.3, 100.0, 0.25, 99.0, 0.41, 102.0, 0.38, 97.0},
                                 {100.0, 50.0, 99.0, -20.0, 102.0, 3.0, 97.0, 7.0},
                                 std::vector<double>(train.input_size(), 12.5)};
      testing::expect_coupling_jacobians_match_differences(train, at);
    }
  }
}

TEST(DriveTrainSegment, InitialStateIsConsistent) {
  for (bool left : {false, true}) {
    for (bool right : {false, true}) {
      const DriveTrainSegment train(four_inertias(left, right));
      std::vector<double> u0(train.input_size(), -7.0);
      testing::expect_consistent_initial_state(train, u0, 1e-12);
      std::vector<double> z0(8), zp0(8);
      train.initial_state(u0, z0, zp0);
      EXPECT_EQ(z0, (std::vector<double>{0.0, 100.0, -0.01, 99.0, 0.02, 101.5, 0.05, 98.0}));
    }
  }
}

// By hand, two inertias with both ends coupled: J = (2, 4), linear shaft c = 100, d = 2, bearing
// damping (0.5, 0), load −3 N·m on inertia 2; φ = (0.1, 0.3), ω = (1, 2), τ_left = 5,
// τ_right = 7: shaft torque 100·0.2 + 2·1 = 22; net torques −5 + 22 − 0.5 = 16.5 and
// −22 + 7 − 3 = −18.
TEST(DriveTrainSegment, HandComputedTorquesAndSigns) {
  DriveTrainParameters p;
  p.inertia = {2.0, 4.0};
  p.shaft = {ElementLaw{100.0, 2.0, 0.0, 0.0, 3.0, 3.0}};
  p.bearing_damping = {0.5, 0.0};
  p.load = {LoadTorque{}, LoadTorque{-3.0}};
  p.angle0 = {0.1, 0.3};
  p.speed0 = {1.0, 2.0};
  const DriveTrainSegment train(p);
  ASSERT_EQ(train.input_size(), 2u);
  EXPECT_EQ(train.input_name(0), "tau_left");
  EXPECT_EQ(train.input_name(1), "tau_right");
  const std::vector<double> z = {0.1, 1.0, 0.3, 2.0}, u = {5.0, 7.0};
  std::vector<double> torque(2);
  train.net_torques(0.0, z, u, torque);
  EXPECT_NEAR(torque[0], 16.5, 1e-12);
  EXPECT_NEAR(torque[1], -18.0, 1e-12);
  const auto r = testing::residual_at(train, 0.0, z, {9.0, 1.5, 8.0, -2.0}, u);
  EXPECT_NEAR(r[0], 9.0 - 1.0, 1e-12);
  EXPECT_NEAR(r[1], 2.0 * 1.5 - 16.5, 1e-12);
  EXPECT_NEAR(r[3], 4.0 * -2.0 + 18.0, 1e-12);
  std::vector<double> y(4);
  train.outputs(0.0, z, u, y);
  EXPECT_EQ(y, (std::vector<double>{0.1, 0.3, 1.0, 2.0}));
  EXPECT_EQ(train.output_name(1), "phi_2");
  EXPECT_EQ(train.output_name(3), "omega_2");
  EXPECT_EQ(train.state_name(3), "omega_2");
  EXPECT_FALSE(train.has_feedthrough());
  p.right_coupled = false;
  EXPECT_EQ(DriveTrainSegment(p).input_name(0), "tau_left");
  p.left_coupled = false;
  p.right_coupled = true;
  EXPECT_EQ(DriveTrainSegment(p).input_name(0), "tau_right");
}

// Two free inertias on an undamped linear shaft, released from a twist Δ0 at rest: the twist
// oscillates as Δ0·cos(ω t) with ω² = c·(J1 + J2)/(J1·J2) and the inertia-weighted mean angle
// stays put (closed form), integrated by IDA+KLU.
TEST(DriveTrainSegment, FreeTwoInertiaOscillationMatchesTheClosedForm) {
  DriveTrainParameters p;
  p.inertia = {0.5, 2.0};
  p.shaft = {ElementLaw{800.0, 0.0, 0.0, 0.0, 3.0, 3.0}};
  p.angle0 = {0.0, 0.02};
  p.speed0 = {0.0, 0.0};
  p.left_coupled = p.right_coupled = false;
  const DriveTrainSegment train(p);
  const double j1 = 0.5, j2 = 2.0, twist0 = 0.02;
  const double omega = std::sqrt(800.0 * (j1 + j2) / (j1 * j2));
  const double mean = (j1 * 0.0 + j2 * 0.02) / (j1 + j2);
  std::vector<double> times;
  for (int k = 1; k <= 10; ++k) times.push_back(0.037 * k);
  const testing::ConstantInput none({});
  const auto states = testing::integrate_states(train, none, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double twist = twist0 * std::cos(omega * times[k]);
    EXPECT_NEAR(states[k][0], mean - j2 / (j1 + j2) * twist, 1e-7 * twist0) << times[k];
    EXPECT_NEAR(states[k][2], mean + j1 / (j1 + j2) * twist, 1e-7 * twist0) << times[k];
    EXPECT_NEAR(states[k][3] - states[k][1], -twist0 * omega * std::sin(omega * times[k]),
                1e-7 * twist0 * omega);
  }
}

// One inertia with bearing damping b under a constant load T spins up as
// ω(t) = T/b·(1 − exp(−b t/J)) (closed form); the driving input τ_right adds to the load.
TEST(DriveTrainSegment, SpinUpAgainstBearingDampingMatchesTheClosedForm) {
  DriveTrainParameters p;
  p.inertia = {0.25};
  p.bearing_damping = {0.5};
  p.load = {LoadTorque{2.0}};
  p.angle0 = {0.0};
  p.speed0 = {0.0};
  p.left_coupled = false;
  const DriveTrainSegment train(p);
  const testing::ConstantInput drive({1.0});
  const std::vector<double> times = {0.1, 0.5, 1.0, 2.0};
  const auto states = testing::integrate_states(train, drive, times);
  const double torque = 3.0, b = 0.5, j = 0.25;
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double decay = std::exp(-b * times[k] / j);
    EXPECT_NEAR(states[k][1], torque / b * (1.0 - decay), 1e-8);
    EXPECT_NEAR(states[k][0], torque / b * (times[k] - j / b * (1.0 - decay)), 1e-8);
  }
}

TEST(DriveTrainSegment, RejectsInconsistentParameters) {
  DriveTrainParameters p = four_inertias(true, true);
  p.shaft.pop_back();
  EXPECT_THROW(DriveTrainSegment{p}, std::invalid_argument);
  p = four_inertias(true, true);
  p.inertia[2] = 0.0;
  EXPECT_THROW(DriveTrainSegment{p}, std::invalid_argument);
  p = four_inertias(true, true);
  p.bearing_damping = {1.0};
  EXPECT_THROW(DriveTrainSegment{p}, std::invalid_argument);
  EXPECT_THROW(DriveTrainSegment{DriveTrainParameters{}}, std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
