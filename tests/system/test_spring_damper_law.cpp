// The spring/damper of a cut element as a coupling law (METHODS.md §1.3, D-2; seed 000
// Eq. 2.9, 2.20, 2.26): reads, writes, and its ∂φ/∂y.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "macrostep/system/spring_damper_law.hpp"

namespace macrostep {
namespace {

// ∂φ/∂y of the cut element law (seed 000 Eq. 2.26 with general exponents, D-2) against central
// finite differences of evaluate(), each element at the scales of its study (so that the FD's
// rounding stays far below 1e-6): linear, cubic (Eq. 2.10), K-5.1 (ex = 6), K-5.3, ex = 7,
// exponents 1-2 and non-integer ones.
TEST(SpringDamperLaw, JacobianMatchesCentralDifferences) {
  using Y = std::array<double, 4>;  // [x_left, v_left, x_right, v_right]
  struct Case {
    library::ElementLaw element;
    std::vector<Y> points;
  };
  const std::vector<Y> unit = {{0.1, -0.4, 0.8, 0.3}, {-0.2, 1.1, -0.9, -0.5}};
  const std::vector<Case> cases = {
      {{1.0e3, 2.0, 0.0, 0.0, 3.0, 3.0}, unit},
      {{1.0e3, 2.0, 5.0e3, 7.0, 3.0, 3.0}, unit},
      {{1.0e6, 1.0e2, 1.0e12, 1.0, 6.0, 3.0}, {{0.01, 2.0, 0.06, -8.0}, {0.03, -1.0, -0.02, 4.0}}},
      {{2.5e6, 25.0, 1e10, 1e-4, 3.0, 3.0}, {{1e-3, 0.2, -1e-3, -0.7}, {-4e-4, 1.5, 3e-4, 0.4}}},
      {{1.0e2, 0.0, 1.0e5, 5.0, 7.0, 3.0}, unit},
      {{5.0e2, 3.0, 2.0e3, 4.0, 1.0, 2.0}, unit},
      {{0.0, 0.0, 1.0e3, 2.0, 4.5, 5.0}, unit},
  };
  for (const Case& c : cases) {
    const system::SpringDamperLaw law("lambda_1", c.element, {0, 1}, {0, 3}, {1, 0}, {1, 2});
    ASSERT_EQ(law.reads().size(), 4u);
    ASSERT_EQ(law.write_count(), 1u);
    EXPECT_FALSE(law.has_feedthrough());
    for (const Y& y0 : c.points) {
      std::array<double, 4> jac{};
      Y y = y0;
      law.jacobian(y, jac);
      for (std::size_t j = 0; j < 4; ++j) {
        const double h = 1e-5 * std::abs(y0[j]);
        std::array<double, 1> up{}, down{};
        y[j] = y0[j] + h;
        law.evaluate(y, up);
        y[j] = y0[j] - h;
        law.evaluate(y, down);
        y[j] = y0[j];
        const double fd = (up[0] - down[0]) / (2.0 * h);
        EXPECT_LT(std::abs(jac[j] - fd), 1e-6 * std::abs(jac[j]))
            << "ex=" << c.element.ex << " ev=" << c.element.ev << " column " << j;
      }
    }
  }
}

// seed 000 Eq. 2.20: φ is the element force of Δx = x_right − x_left, Δv = v_right − v_left,
// bit for bit, named after its coupling variable.
TEST(SpringDamperLaw, EvaluatesTheElementForceOfTheDifferences) {
  const library::ElementLaw e{1.0e6, 1.0e2, 1.0e12, 1.0, 6.0, 3.0};
  const system::SpringDamperLaw law("lambda_4", e, {3, 1}, {3, 3}, {4, 0}, {4, 2});
  EXPECT_EQ(law.variable_names()[0], "lambda_4");
  EXPECT_EQ(law.reads()[1].subsystem, 3u);
  EXPECT_EQ(law.reads()[1].output, 3u);
  EXPECT_EQ(law.reads()[2].subsystem, 4u);
  const std::array<double, 4> y = {0.013, -2.5, 0.041, 3.25};
  std::array<double, 1> u{};
  law.evaluate(y, u);
  EXPECT_EQ(u[0], e.force(y[2] - y[0], y[3] - y[1]));
  std::array<double, 2> too_many{};
  EXPECT_THROW(law.evaluate(y, too_many), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
