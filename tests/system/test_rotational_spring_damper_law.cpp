// The torsional spring/damper coupling law (seed 003 §2.6, rotational element; law shape of seed
// 000 Eq. 2.9 with general exponents, D-2).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "law_checks.hpp"
#include "macrostep/system/rotational_spring_damper_law.hpp"

namespace macrostep {
namespace {

using system::OutputRef;
using system::RotationalSpringDamperLaw;

// τ by hand for one linear + cubic shaft: c = 400 N·m/rad, d = 2 N·m·s/rad, C = 1e4 N·m/rad³,
// D = 0.5 N·m·s³/rad³; φ_left = 0.3, φ_right = 0.2 (Δφ = −0.1), ω_left = 1, ω_right = 3 (Δω = 2):
// τ = 400·(−0.1) + 2·2 + 1e4·(−0.001) + 0.5·8 = −40 + 4 − 10 + 4 = −42.
TEST(RotationalSpringDamperLaw, TorqueOfAHandComputedTwist) {
  const library::ElementLaw shaft{400.0, 2.0, 1.0e4, 0.5, 3.0, 3.0};
  const RotationalSpringDamperLaw law("shaft.torque", shaft, {0, 1}, {0, 3}, {1, 0}, {1, 2});
  EXPECT_EQ(law.variable_names()[0], "shaft.torque");
  ASSERT_EQ(law.reads().size(), 4u);
  EXPECT_EQ(law.reads()[3].subsystem, 1u);
  EXPECT_EQ(law.reads()[3].output, 2u);
  EXPECT_FALSE(law.has_feedthrough());
  const std::array<double, 4> y = {0.3, 1.0, 0.2, 3.0};
  std::array<double, 1> torque{};
  law.evaluate(y, torque);
  EXPECT_NEAR(torque[0], -42.0, 1e-12);
  // Linear part only: the torsional spring of seed 003 (u = M = c_r·Δφ).
  const RotationalSpringDamperLaw spring("m", library::ElementLaw{250.0, 0, 0, 0, 3, 3}, {0, 0},
                                         {0, 1}, {1, 0}, {1, 1});
  spring.evaluate(y, torque);
  EXPECT_NEAR(torque[0], 250.0 * -0.1, 1e-12);
  std::array<double, 2> wrong{};
  EXPECT_THROW(law.evaluate(y, wrong), std::invalid_argument);
}

// ∂τ/∂[φ_l, ω_l, φ_r, ω_r] against central differences: linear, cubic, higher and non-integer
// exponents, each at the scale of a drive-train shaft.
TEST(RotationalSpringDamperLaw, JacobianMatchesCentralDifferences) {
  const std::vector<library::ElementLaw> shafts = {
      {1.0e4, 5.0, 0.0, 0.0, 3.0, 3.0},
      {1.0e4, 5.0, 3.0e6, 2.0, 3.0, 3.0},
      {2.0e5, 0.0, 1.0e9, 0.1, 6.0, 2.5},
      {5.0e2, 1.0, 7.0e3, 3.0, 4.5, 5.0},
  };
  const std::vector<std::vector<double>> points = {
      {0.10, 12.0, 0.13, 11.5}, {-2.0, -30.0, -2.04, -29.0}, {1.0, 0.5, 0.96, 0.8}};
  for (const auto& shaft : shafts) {
    const RotationalSpringDamperLaw law("tau", shaft, {0, 0}, {0, 1}, {1, 0}, {1, 1});
    for (const auto& y : points) {
      testing::expect_law_jacobian_matches_central_differences(law, y, {1.0, 1.0, 1.0, 1.0}, 1e-6,
                                                               1e-6);
    }
  }
}

}  // namespace
}  // namespace macrostep
