// MonolithicSystem: a CoupledSystem assembled into one index-1 DAE in (z, u) (METHODS.md §1.1,
// seed 000 Eq. 2.4), integrated by the existing IDA+KLU integrator. Checked against the
// whole-chain model that the monolithic run integrates today, against a whole drive train, and
// against the closed-form oscillation of a cylinder between two closed hydraulic chambers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "../library/subsystem_checks.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/drive_train.hpp"
#include "macrostep/library/hydraulic_cylinder.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/hydraulic_node_law.hpp"
#include "macrostep/system/monolithic_system.hpp"
#include "macrostep/system/rotational_spring_damper_law.hpp"

namespace macrostep {
namespace {

using system::CoupledSystem;
using system::MonolithicSystem;
using system::OutputRef;

// A nonlinear chain (cubic and e_x = 6 elements) with harmonic forces on two masses.
library::ChainParameters nonlinear_chain(std::size_t n) {
  library::ChainParameters p;
  for (std::size_t i = 0; i < n; ++i) {
    p.mass.push_back(1.0 + 0.1 * static_cast<double>(i));
    p.x0.push_back(1e-3 * static_cast<double>(i % 3) - 1e-3);
    p.v0.push_back(0.05 * static_cast<double>(i % 4) - 0.07);
  }
  for (std::size_t i = 0; i <= n; ++i) {
    p.element.push_back({1e4 + 100.0 * static_cast<double>(i), 2.0, 1e8, 1e-2, 3.0, 3.0});
  }
  p.element[4].ex = 6.0;
  p.element[4].C = 1e14;
  p.forces.assign(n, {});
  p.forces[1].harmonic.push_back({5.0, 40.0, 0.0});
  p.forces[6].harmonic.push_back({-3.0, 65.0, 0.3});
  return p;
}

ida::IntegratorOptions reference_options() {
  ida::IntegratorOptions o;
  o.rtol = 1e-10;
  o.atol_pos = 1e-13;
  o.atol_vel = 1e-10;
  return o;
}

// The states at each time, by IDA+KLU at reference tolerances.
std::vector<std::vector<double>> run(const model::Subsystem& model,
                                     const std::vector<double>& times) {
  ida::Integrator integrator(model, reference_options());
  std::vector<double> z(model.state_size()), zp(model.state_size());
  std::vector<std::vector<double>> states;
  for (double t : times) {
    integrator.advance_to(t);
    integrator.state(z, zp);
    states.push_back(z);
  }
  return states;
}

// Layout and names: subsystem blocks in order, then the coupling variables; the chain keeps its
// global state names; the pattern holds the subsystem blocks, input columns, coupling rows and
// the identity.
TEST(MonolithicSystem, LayoutAndNames) {
  const auto params = nonlinear_chain(9);
  const CoupledSystem coupled = system::make_chain_system(params, library::equal_partition(9, 3));
  const MonolithicSystem mono(coupled);
  EXPECT_EQ(mono.state_size(), 18u + 2u);
  EXPECT_EQ(mono.input_size(), 0u);
  EXPECT_EQ(mono.coupling_offset(), 18u);
  EXPECT_EQ(mono.state_offset(1), 6u);
  EXPECT_EQ(mono.state_name(0), "x_1");
  EXPECT_EQ(mono.state_name(7), "v_4");
  EXPECT_EQ(mono.state_name(18), "lambda_1");
  EXPECT_EQ(mono.state_name(19), "lambda_2");
  EXPECT_EQ(mono.state_roles()[19], model::StateRole::kOther);
  EXPECT_EQ(mono.output_size(), 12u);
  EXPECT_EQ(mono.output_name(4), "x_4");
  // Subsystem blocks (3 × (8·3 − 4)) + input entries (4) + coupling rows (2 × 4) + identity (2).
  EXPECT_EQ(mono.jacobian_pattern().nonzeros(), 3u * 20u + 4u + 8u + 2u);
}

// The assembled Jacobian (blocks, input columns, −∂φ/∂y·∂y/∂z, identity) against central
// differences of the assembled residual, and a consistent initial state (coupling rows too).
TEST(MonolithicSystem, JacobianAndInitialStateOfTheChain) {
  const auto params = nonlinear_chain(9);
  const CoupledSystem coupled =
      system::make_chain_system(params, library::sized_partition(9, {4, 2, 3}));
  const MonolithicSystem mono(coupled);
  std::vector<double> z0(mono.state_size()), zp0(mono.state_size());
  mono.initial_state({}, z0, zp0);
  testing::expect_consistent_initial_state(mono, {}, 1e-9);
  // Off the initial state: perturbed states and couplings.
  testing::SubsystemPoint at{0.013, z0, zp0, {}};
  for (std::size_t i = 0; i < at.z.size(); ++i) {
    at.z[i] += 1e-4 * std::sin(static_cast<double>(i));
  }
  for (double cj : {1.0, 1e4}) testing::expect_jacobian_matches_central_differences(mono, at, cj);
}

// The acceptance check: the chain cut into 2 or 3 subsystems and assembled (couplings as
// algebraic unknowns) follows the whole-chain model that `macrostep run --monolithic` integrates
// (library::ChainSegment over all masses), both by IDA+KLU at reference tolerances.
TEST(MonolithicSystem, AssembledChainMatchesTheWholeChain) {
  const std::size_t n = 9;
  const auto params = nonlinear_chain(n);
  const library::ChainSegment whole(params, 0, n);
  std::vector<double> times;
  for (int k = 1; k <= 8; ++k) times.push_back(0.025 * k);
  const auto expected = run(whole, times);
  for (const auto& boundaries : {library::equal_partition(n, 2), library::equal_partition(n, 3)}) {
    const CoupledSystem coupled = system::make_chain_system(params, boundaries);
    const MonolithicSystem mono(coupled);
    const auto actual = run(mono, times);
    // The assembled model names its states as the whole chain does ("x_5", "v_5").
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < mono.state_size(); ++i) index[mono.state_name(i)] = i;
    double largest_x = 0.0, largest_v = 0.0, worst_x = 0.0, worst_v = 0.0;
    for (std::size_t k = 0; k < times.size(); ++k) {
      for (std::size_t i = 0; i < whole.state_size(); ++i) {
        const std::string name = whole.state_name(i);
        const double want = expected[k][i], got = actual[k][index.at(name)];
        double& largest = name[0] == 'x' ? largest_x : largest_v;
        double& worst = name[0] == 'x' ? worst_x : worst_v;
        largest = std::max(largest, std::fabs(want));
        worst = std::max(worst, std::fabs(got - want));
      }
    }
    EXPECT_LT(worst_x, 1e-7 * largest_x) << boundaries.size() - 1 << " subsystems";
    EXPECT_LT(worst_v, 1e-7 * largest_v) << boundaries.size() - 1 << " subsystems";
    const auto scientific = [](double v) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3e", v);
      return std::string(text);
    };
    RecordProperty("worst_relative_x_" + std::to_string(boundaries.size() - 1),
                   scientific(worst_x / largest_x));
    RecordProperty("worst_relative_v_" + std::to_string(boundaries.size() - 1),
                   scientific(worst_v / largest_v));
  }
}

library::DriveTrainParameters drive_train(std::size_t first, std::size_t last, bool left,
                                          bool right) {
  const std::vector<double> inertia = {0.1, 0.2, 0.15, 0.3};
  const std::vector<library::ElementLaw> shafts = {{4.0e3, 0.5, 2.0e5, 0.0, 3.0, 3.0},
                                                   {6.0e3, 0.8, 5.0e5, 0.0, 3.0, 3.0},
                                                   {3.0e3, 0.3, 0.0, 0.0, 3.0, 3.0}};
  library::DriveTrainParameters p;
  for (std::size_t k = first; k < last; ++k) {
    p.inertia.push_back(inertia[k]);
    p.bearing_damping.push_back(0.01 * static_cast<double>(k + 1));
    p.load.push_back(k == 3 ? library::LoadTorque{-2.0, -10.0, 0.05, 0.005}
                            : library::LoadTorque{k == 0 ? 12.0 : 0.0});
    p.angle0.push_back(0.0);
    p.speed0.push_back(50.0);
    if (k + 1 < last) p.shaft.push_back(shafts[k]);
  }
  p.left_coupled = left;
  p.right_coupled = right;
  return p;
}

// A drive train of four inertias cut at its middle shaft (RotationalSpringDamperLaw) and
// assembled, against the uncut train, by IDA+KLU (with a load step at 0.05 s).
TEST(MonolithicSystem, AssembledDriveTrainMatchesTheWholeTrain) {
  const library::DriveTrainSegment whole(drive_train(0, 4, false, false));
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(
      std::make_unique<library::DriveTrainSegment>(drive_train(0, 2, false, true)));
  subsystems.push_back(
      std::make_unique<library::DriveTrainSegment>(drive_train(2, 4, true, false)));
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  // Outputs [φ_1, φ_n, ω_1, ω_n]: the left segment's last inertia, the right one's first.
  laws.push_back(std::make_unique<system::RotationalSpringDamperLaw>(
      "shaft_2.torque", library::ElementLaw{6.0e3, 0.8, 5.0e5, 0.0, 3.0, 3.0}, OutputRef{0, 1},
      OutputRef{0, 3}, OutputRef{1, 0}, OutputRef{1, 2}));
  const CoupledSystem coupled(std::move(subsystems), std::move(laws), {{0}, {0}}, {});
  const MonolithicSystem mono(coupled);
  testing::expect_consistent_initial_state(mono, {}, 1e-9);
  const std::vector<double> times = {0.01, 0.04, 0.06, 0.1};
  const auto expected = run(whole, times);
  const auto actual = run(mono, times);
  // The segments' states in order are the whole train's: [φ_1, ω_1, ..., φ_4, ω_4], then τ.
  for (std::size_t k = 0; k < times.size(); ++k) {
    for (std::size_t i = 0; i < whole.state_size(); ++i) {
      EXPECT_NEAR(actual[k][i], expected[k][i], 1e-7 * std::max(1.0, std::fabs(expected[k][i])))
          << whole.state_name(i) << " at t = " << times[k];
    }
  }
}

// A cylinder between two closed chambers, each a HydraulicNodeLaw with a constant bulk modulus
// (seed 003 Eq. 2.89): a linear oscillator m·ẍ = F0 − k·x with hydraulic stiffness
// k = E·(A_a²/V_a + A_b²/V_b) and F0 = A_a·p_a0 − A_b·p_b0, so
//   x(t) = F0/k·(1 − cos ωt) + v0/ω·sin ωt,  ω² = k/m,
// and the chamber pressures follow p_a = p_a0 − E/V_a·A_a·x, p_b = p_b0 + E/V_b·A_b·x
// (the pressure build-up of closed chambers), by IDA+KLU on the assembled system.
TEST(MonolithicSystem, CylinderBetweenClosedChambersMatchesTheClosedForm) {
  const double m = 2.0, area_a = 2e-3, area_b = 1e-3, v0 = 0.1;
  const double modulus = 1.4e9, volume_a = 1e-4, volume_b = 5e-5, pa0 = 5e6, pb0 = 8e6;
  library::HydraulicCylinderParameters cylinder;
  cylinder.mass = m;
  cylinder.area_a = area_a;
  cylinder.area_b = area_b;
  cylinder.v0 = v0;
  cylinder.rod_coupled = false;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<library::HydraulicCylinder>(cylinder));
  const auto node = [&](double volume, double p0) {
    system::HydraulicNodeLaw::Parameters p;
    p.node_volume = volume;
    p.initial_pressure = p0;
    p.constant_modulus = modulus;
    return p;
  };
  using library::HydraulicCylinder;
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<system::HydraulicNodeLaw>(
      "chamber_a.p", node(volume_a, pa0),
      std::vector<OutputRef>{{0, HydraulicCylinder::kVolumeA}}));
  laws.push_back(std::make_unique<system::HydraulicNodeLaw>(
      "chamber_b.p", node(volume_b, pb0),
      std::vector<OutputRef>{{0, HydraulicCylinder::kVolumeB}}));
  const CoupledSystem coupled(std::move(subsystems), std::move(laws), {{0, 1}}, {});
  const MonolithicSystem mono(coupled);
  testing::expect_consistent_initial_state(mono, {}, 1e-6);
  std::vector<double> z0(4), zp0(4);
  mono.initial_state({}, z0, zp0);
  // u̇0 = ∂p/∂V·V̇ = E/V_a·(−A_a·v0) (Eq. 2.91).
  EXPECT_NEAR(zp0[2], -modulus / volume_a * area_a * v0, 1e-6 * modulus / volume_a * area_a * v0);
  testing::expect_jacobian_matches_central_differences(mono, {0.0, z0, zp0, {}}, 1e4, 1e-7);

  const double k = modulus * (area_a * area_a / volume_a + area_b * area_b / volume_b);
  const double omega = std::sqrt(k / m), f0 = area_a * pa0 - area_b * pb0;
  std::vector<double> times;
  for (int i = 1; i <= 12; ++i) times.push_back(2.5e-4 * i);  // about 3 periods
  const auto states = run(mono, times);
  const double amplitude = f0 / k + v0 / omega;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    const double x = f0 / k * (1.0 - std::cos(omega * t)) + v0 / omega * std::sin(omega * t);
    EXPECT_NEAR(states[i][0], x, 1e-7 * amplitude) << "t = " << t;
    EXPECT_NEAR(states[i][2], pa0 - modulus / volume_a * area_a * x,
                1e-7 * modulus / volume_a * area_a * amplitude);
    EXPECT_NEAR(states[i][3], pb0 + modulus / volume_b * area_b * x,
                1e-7 * modulus / volume_b * area_b * amplitude);
  }
}

}  // namespace
}  // namespace macrostep
