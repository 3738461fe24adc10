// HydraulicCylinder: the piston of a double-acting cylinder whose chambers are hydraulic volume
// nodes (seed 003 §2.4, Eq. 2.88-2.90: the slave outputs abstract volumes V_i and flows Q_i).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "macrostep/library/hydraulic_cylinder.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::HydraulicCylinder;
using library::HydraulicCylinderParameters;

HydraulicCylinderParameters cylinder(bool rod_coupled, double coulomb) {
  HydraulicCylinderParameters p;
  p.mass = 3.0;
  p.area_a = 2.0e-3;
  p.area_b = 1.2e-3;
  p.viscous_friction = 150.0;
  p.coulomb_friction = coulomb;
  p.coulomb_speed = 0.01;
  p.x0 = 0.05;
  p.v0 = -0.2;
  p.rod_coupled = rod_coupled;
  return p;
}

TEST(HydraulicCylinder, JacobianMatchesFiniteDifferences) {
  for (bool rod : {false, true}) {
    for (double coulomb : {0.0, 40.0}) {
      const HydraulicCylinder piston(cylinder(rod, coulomb));
      for (double v : {-0.3, -0.004, 0.0, 0.007, 0.5}) {
        testing::SubsystemPoint at{0.0, {0.07, v}, {v, 12.0}, {5.0e6, 2.0e6}};
        if (rod) at.u.push_back(-800.0);
        for (double cj : {1.0, 2.0e4}) {
          testing::expect_jacobian_matches_central_differences(piston, at, cj, 1e-7);
        }
      }
    }
  }
}

TEST(HydraulicCylinder, CouplingJacobiansMatchFiniteDifferences) {
  for (bool rod : {false, true}) {
    const HydraulicCylinder piston(cylinder(rod, 40.0));
    testing::SubsystemPoint at{0.0, {0.07, 0.3}, {0.3, 12.0}, {5.0e6, 2.0e6}};
    if (rod) at.u.push_back(-800.0);
    testing::expect_coupling_jacobians_match_differences(piston, at);
  }
}

TEST(HydraulicCylinder, InitialStateIsConsistent) {
  for (bool rod : {false, true}) {
    const HydraulicCylinder piston(cylinder(rod, 40.0));
    std::vector<double> u0 = {8.0e6, 1.0e6};
    if (rod) u0.push_back(250.0);
    testing::expect_consistent_initial_state(piston, u0, 1e-9);
  }
}

// By hand: A_a·p_a − A_b·p_b − d·v − F_c·tanh(v/v_c) + F_rod with p_a = 50 bar, p_b = 20 bar,
// v = −0.2, F_rod = −1000 N: 1e4 − 2.4e3 + 30 + 40·tanh(20) − 1000; outputs relative to x0.
TEST(HydraulicCylinder, HandComputedForceAndOutputs) {
  const HydraulicCylinder piston(cylinder(true, 40.0));
  EXPECT_EQ(piston.input_size(), 3u);
  EXPECT_FALSE(piston.has_feedthrough());
  const std::vector<double> u = {5.0e6, 2.0e6, -1000.0};
  EXPECT_NEAR(piston.net_force(-0.2, u), 1.0e4 - 2.4e3 + 30.0 + 40.0 * std::tanh(20.0) - 1000.0,
              1e-9);
  std::vector<double> y(6);
  piston.outputs(0.0, std::vector<double>{0.08, 0.5}, u, y);
  EXPECT_EQ(y[HydraulicCylinder::kPosition], 0.08);
  EXPECT_EQ(y[HydraulicCylinder::kSpeed], 0.5);
  EXPECT_NEAR(y[HydraulicCylinder::kVolumeA], -2.0e-3 * 0.03, 1e-18);
  EXPECT_NEAR(y[HydraulicCylinder::kFlowA], -2.0e-3 * 0.5, 1e-18);
  EXPECT_NEAR(y[HydraulicCylinder::kVolumeB], 1.2e-3 * 0.03, 1e-18);
  EXPECT_NEAR(y[HydraulicCylinder::kFlowB], 1.2e-3 * 0.5, 1e-18);
  EXPECT_EQ(piston.output_name(2), "volume_a");
  EXPECT_EQ(piston.input_name(2), "rod_force");
  EXPECT_EQ(HydraulicCylinder(cylinder(false, 0.0)).input_size(), 2u);
}

// Constant chamber pressures against viscous friction: v(t) = v∞ + (v0 − v∞)·exp(−d t/m),
// v∞ = (A_a p_a − A_b p_b)/d, and x(t) its integral (closed form), by IDA+KLU; the volume
// outputs follow V̇ = Q (Eq. 2.88): V_a(t) = −A_a·(x(t) − x0).
TEST(HydraulicCylinder, ConstantPressureMotionMatchesTheClosedForm) {
  const HydraulicCylinder piston(cylinder(false, 0.0));
  const double pa = 6.0e6, pb = 2.0e6, d = 150.0, m = 3.0, v0 = -0.2, x0 = 0.05;
  const double v_end = (2.0e-3 * pa - 1.2e-3 * pb) / d;
  const testing::ConstantInput pressures({pa, pb});
  const std::vector<double> times = {0.005, 0.02, 0.05, 0.1};
  const auto states = testing::integrate_states(piston, pressures, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double decay = std::exp(-d * times[k] / m);
    const double v = v_end + (v0 - v_end) * decay;
    const double x = x0 + v_end * times[k] + (v0 - v_end) * m / d * (1.0 - decay);
    EXPECT_NEAR(states[k][1], v, 1e-8 * std::fabs(v_end));
    EXPECT_NEAR(states[k][0], x, 1e-9);
    std::vector<double> y(6);
    piston.outputs(times[k], states[k], std::vector<double>{pa, pb}, y);
    EXPECT_NEAR(y[HydraulicCylinder::kVolumeA], -2.0e-3 * (x - x0), 1e-12);
  }
}

TEST(HydraulicCylinder, RejectsInvalidParameters) {
  auto p = cylinder(true, 0.0);
  p.area_b = 0.0;
  EXPECT_THROW(HydraulicCylinder{p}, std::invalid_argument);
  p = cylinder(true, 0.0);
  p.mass = -1.0;
  EXPECT_THROW(HydraulicCylinder{p}, std::invalid_argument);
  p = cylinder(true, 1.0);
  p.coulomb_speed = 0.0;
  EXPECT_THROW(HydraulicCylinder{p}, std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
