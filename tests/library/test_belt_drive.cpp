// BeltDrive: two pulleys on an elastic belt with a tensioner idler on the slack span (the
// multi-domain example; library/belt_drive.hpp). Besides the contract checks of every model, the
// statics against their closed form: a driving torque τ on the driver pulley, the matching
// τ·r_2/r_1 against it on the driven pulley and a tensioner force k_g·T_0 on the idler settle
// where the tight span carries T_0 + τ/r_1, the slack span stays at T_0 (the tensioner holds it),
// the driver has pulled s = τ/(r_1·c_b) of belt and the idler has followed by s/k_g.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "macrostep/library/belt_drive.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::BeltDrive;
using library::BeltDriveParameters;

BeltDriveParameters belt(bool left, bool right) {
  BeltDriveParameters p;
  p.driver_inertia = 5e-3;
  p.driven_inertia = 2e-2;
  p.driver_radius = 0.1;
  p.driven_radius = 0.2;
  p.span_stiffness = 2e5;
  p.span_damping = 200.0;
  p.pretension = 400.0;
  p.idler_mass = 0.3;
  p.idler_factor = 0.9;
  p.idler_damping = 50.0;
  p.bearing_damping = {0.2, 0.4};
  p.speed0 = {3.0, 1.5};
  p.left_coupled = left;
  p.right_coupled = right;
  return p;
}

// τ_left = −12, τ_right = 20, F_idler = −360 for the inputs the belt has.
std::vector<double> some_inputs(const BeltDrive& b) {
  std::vector<double> u;
  for (std::size_t i = 0; i < b.input_size(); ++i) {
    const std::string name = b.input_name(i);
    u.push_back(name == "tau_left" ? -12.0 : name == "tau_right" ? 20.0 : -360.0);
  }
  return u;
}

TEST(BeltDrive, NamesAndSizesFollowTheCoupledEnds) {
  const BeltDrive both(belt(true, true)), free_left(belt(false, true)),
      free_right(belt(true, false));
  EXPECT_EQ(both.input_size(), 3u);
  EXPECT_EQ(both.input_name(0), "tau_left");
  EXPECT_EQ(both.input_name(1), "tau_right");
  EXPECT_EQ(both.input_name(2), "idler_force");
  EXPECT_EQ(free_left.input_name(0), "tau_right");
  EXPECT_EQ(free_right.input_name(1), "idler_force");
  EXPECT_EQ(both.output_name(4), "x_idler");
  EXPECT_EQ(both.output_name(7), "tension_slack");
  EXPECT_FALSE(both.has_feedthrough());
  BeltDriveParameters bad = belt(true, true);
  bad.driver_radius = 0.0;
  EXPECT_THROW(BeltDrive{bad}, std::invalid_argument);
}

TEST(BeltDrive, JacobiansMatchFiniteDifferences) {
  for (bool left : {false, true}) {
    for (bool right : {false, true}) {
      const BeltDrive b(belt(left, right));
      testing::SubsystemPoint at{0.1,
                                 {0.3, 2.0, 0.14, 1.1, 2e-3, -0.05},
                                 {2.0, 40.0, 1.1, -30.0, -0.05, 7.0},
                                 some_inputs(b)};
      for (double cj : {1.0, 3.0e4}) {
        testing::expect_jacobian_matches_central_differences(b, at, cj, 1e-7);
      }
      testing::expect_coupling_jacobians_match_differences(b, at);
      testing::expect_consistent_initial_state(b, some_inputs(b), 1e-9);
    }
  }
}

TEST(BeltDrive, StaticsUnderADrivingTorqueMatchTheClosedForm) {
  const BeltDriveParameters p = belt(true, true);
  const BeltDrive b(p);
  const double tau = 15.0;  // [N m] on the driver
  // A left end receives −tau_left; the idler −idler_force.
  const testing::ConstantInput input(std::vector<double>{
      -tau, -tau * p.driven_radius / p.driver_radius, -p.idler_factor * p.pretension});
  const auto states = testing::integrate_states(b, input, {3.0});
  const auto& z = states.back();
  const double s = p.driver_radius * z[0] - p.driven_radius * z[2];
  const double s_expected = tau / (p.driver_radius * p.span_stiffness);
  EXPECT_NEAR(s, s_expected, 1e-6 * s_expected);
  EXPECT_NEAR(z[4], s_expected / p.idler_factor, 1e-6 * s_expected);
  EXPECT_NEAR(z[1], 0.0, 1e-6);
  EXPECT_NEAR(z[3], 0.0, 1e-6);
  const auto tensions = b.tensions(z);
  EXPECT_NEAR(tensions[0], p.pretension + tau / p.driver_radius, 1e-6 * p.pretension);
  EXPECT_NEAR(tensions[1], p.pretension, 1e-6 * p.pretension);
}

}  // namespace
}  // namespace macrostep
