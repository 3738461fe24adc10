// The signal connection u = gain·y + offset (seed 003 §2.5.1: the master feeds a controller's
// measurement and command through).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "law_checks.hpp"
#include "macrostep/system/signal_law.hpp"

namespace macrostep {
namespace {

using system::SignalLaw;

TEST(SignalLaw, ScalesAndShiftsOneOutput) {
  const SignalLaw law("motor.command", {2, 5}, -3.0, 0.5);
  ASSERT_EQ(law.reads().size(), 1u);
  EXPECT_EQ(law.reads()[0].subsystem, 2u);
  EXPECT_EQ(law.reads()[0].output, 5u);
  EXPECT_EQ(law.variable_names()[0], "motor.command");
  EXPECT_FALSE(law.has_feedthrough());
  std::array<double, 1> u{};
  law.evaluate(std::array<double, 1>{4.0}, u);
  EXPECT_EQ(u[0], -11.5);  // −3·4 + 0.5
  // Defaults: the plain feed-through of Fig. 2.20.
  const SignalLaw plain("speed", {0, 1});
  plain.evaluate(std::array<double, 1>{-7.25}, u);
  EXPECT_EQ(u[0], -7.25);
}

TEST(SignalLaw, JacobianIsTheGain) {
  const SignalLaw law("u", {0, 0}, 2.5e3, -1.0);
  testing::expect_law_jacobian_matches_central_differences(law, {0.37}, {1.0}, 1e-6, 1e-9);
  std::array<double, 1> d{};
  law.jacobian(std::array<double, 1>{123.0}, d);
  EXPECT_EQ(d[0], 2.5e3);
}

TEST(SignalLaw, RejectsNonFiniteParametersAndWrongSizes) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(SignalLaw("u", {0, 0}, inf), std::invalid_argument);
  EXPECT_THROW(SignalLaw("u", {0, 0}, 1.0, std::nan("")), std::invalid_argument);
  const SignalLaw law("u", {0, 0});
  std::array<double, 2> two{};
  EXPECT_THROW(law.evaluate(two, std::span<double>(two).first(1)), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
