// The pieces of constraint coupling (seed 004, METHODS.md §8) on the two-mass model of
// seed 004 App. D: the joint law and its ∂r/∂y, the consistent initial multipliers, the Newton
// rows without identity, and the heun Jacobian against seed 004 Eq. 50.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "law_checks.hpp"
#include "macrostep/corrector/heun.hpp"
#include "macrostep/corrector/interface_jacobian.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/joint_constraint_law.hpp"

namespace macrostep {
namespace {

constexpr double m1 = 1.0, c1 = 1.0e4, d1 = 2.0, m2 = 2.0, c2 = 3.0e4, d2 = 1.0, x0 = 1.0e-3;

library::OscillatorMassParameters body(double m, double c, double d, double sign) {
  library::OscillatorMassParameters p;
  p.mass = m;
  p.stiffness = c;
  p.damping = d;
  p.force_input = true;
  p.velocity_input = true;
  p.force_sign = sign;
  p.x0 = x0;
  return p;
}

// Mass 1 (+λ, +μ) and mass 2 (−λ, −μ), joined: inputs [force, mu] of both fed by [λ, μ].
system::CoupledSystem joined() {
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<library::OscillatorMass>(body(m1, c1, d1, 1.0)));
  subsystems.push_back(std::make_unique<library::OscillatorMass>(body(m2, c2, d2, -1.0)));
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<system::JointConstraintLaw>(
      "lambda", "mu", system::OutputRef{0, 0}, system::OutputRef{0, 1}, system::OutputRef{1, 0},
      system::OutputRef{1, 1}));
  return system::CoupledSystem(std::move(subsystems), std::move(laws), {{0, 1}, {0, 1}}, {});
}

TEST(JointConstraintLaw, ResidualIsMinusTheConstraintAndItsJacobianMatches) {
  const system::JointConstraintLaw law("lambda", "mu", {0, 0}, {0, 1}, {1, 0}, {1, 1});
  EXPECT_TRUE(law.is_constraint());
  std::vector<double> r(2);
  law.evaluate(std::vector<double>{1.0, 2.0, 1.5, 2.25}, r);
  EXPECT_EQ(r[0], -0.5);   // −(x_b − x_a)
  EXPECT_EQ(r[1], -0.25);  // −(v_b − v_a)
  testing::expect_law_jacobian_matches_central_differences(law, {1e-3, 0.1, 2e-3, -0.3},
                                                           {1e-3, 1.0, 1e-3, 1.0}, 1e-6, 1e-8);
}

// ġ = 0 at t0: equal velocities give μ = 0, equal accelerations λ = (a2 − a1)/(1/m1 + 1/m2)
// with the free accelerations a_i = −c_i x0/m_i (seed 004 App. D, Eq. 58).
TEST(JointConstraintLaw, InitialMultipliersAreConsistent) {
  const system::CoupledSystem sys = joined();
  EXPECT_TRUE(sys.has_constraints());
  EXPECT_TRUE(sys.is_constraint(0));
  EXPECT_TRUE(sys.is_constraint(1));
  const std::vector<double> u = sys.initial_couplings();
  const double a1 = -c1 * x0 / m1, a2 = -c2 * x0 / m2;
  EXPECT_NEAR(u[0], (a2 - a1) / (1.0 / m1 + 1.0 / m2), 1e-12);
  EXPECT_NEAR(u[1], 0.0, 1e-15);
}

// A constraint's Newton row has no identity: J = −∂r/∂y·∂y/∂s (METHODS §8, D-45).
TEST(JointConstraintLaw, InterfaceJacobianRowsHaveNoIdentity) {
  const system::CoupledSystem sys = joined();
  corrector::InputSensitivities dyds(sys);
  // Any sensitivities: outputs [x, v] of each body over inputs [λ, μ].
  const double s[2][2][2] = {{{1e-8, 2e-4}, {2e-4, -1e-6}}, {{-5e-9, -2e-4}, {-1e-4, 3e-6}}};
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t o = 0; o < 2; ++o) {
      for (std::size_t c = 0; c < 2; ++c) dyds.at(i, o, c) = s[i][o][c];
    }
  }
  corrector::InterfaceJacobian jacobian(sys);
  const std::vector<std::vector<double>> y = {{x0, 0.0}, {x0, 0.0}};
  ASSERT_TRUE(jacobian.assemble(y, dyds));
  const std::vector<double> j = jacobian.dense();
  for (std::size_t row = 0; row < 2; ++row) {
    for (std::size_t c = 0; c < 2; ++c) {
      // r_row = y_a[row] − y_b[row]: J = −(∂y_a/∂s − ∂y_b/∂s) = ∂(x_b − x_a)/∂s
      EXPECT_DOUBLE_EQ(j[row * 2 + c], s[1][row][c] - s[0][row][c]) << row << "," << c;
    }
  }
}

// seed 004 Eq. 50 (κ = 0, constant coupling variables), with the damping term of the whole Heun
// step: ∂x1/∂λ = H²/(2m1), ∂v1/∂λ = H/m1 − d1H²/(2m1²), ∂x1/∂μ = H, ∂v1/∂μ = −c1H²/(2m1);
// mass 2 mirrored. For κ ≥ 1 the end value's basis is 0 at T_N: ∂z/∂s = H/2·f_u.
TEST(HeunSensitivities, TwoMassEntriesAreSeed004Eq50) {
  const system::CoupledSystem sys = joined();
  const corrector::HeunSensitivities heun(sys);
  corrector::InputSensitivities dyds(sys);
  const double h = 1e-4;
  const std::vector<std::vector<double>> z = {{x0, 0.0}, {x0, 0.0}};
  const std::vector<double> u0 = sys.initial_couplings();
  const std::vector<std::vector<double>> u = {u0, u0};
  heun.fill(0.0, h, true, z, u, dyds);
  const double m[2] = {m1, m2}, c[2] = {c1, c2}, d[2] = {d1, d2}, sign[2] = {1.0, -1.0};
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i + 1);
    const double tol = 1e-12;
    EXPECT_NEAR(dyds.at(i, 0, 0), sign[i] * h * h / (2 * m[i]), tol * h * h);
    EXPECT_NEAR(dyds.at(i, 1, 0), sign[i] * (h / m[i] - d[i] * h * h / (2 * m[i] * m[i])), tol * h);
    EXPECT_NEAR(dyds.at(i, 0, 1), sign[i] * h, tol * h);
    EXPECT_NEAR(dyds.at(i, 1, 1), -sign[i] * c[i] * h * h / (2 * m[i]), tol * h);
  }
  heun.fill(0.0, h, false, z, u, dyds);
  EXPECT_NEAR(dyds.at(0, 0, 0), 0.0, 1e-20);
  EXPECT_NEAR(dyds.at(0, 1, 0), h / (2 * m1), 1e-12 * h);
  EXPECT_NEAR(dyds.at(1, 0, 1), -h / 2, 1e-12 * h);
}

}  // namespace
}  // namespace macrostep
