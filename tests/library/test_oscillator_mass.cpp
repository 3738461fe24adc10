// OscillatorMass (library/oscillator_mass.hpp; METHODS.md §1.2, seed 000 Eq. 2.6-2.8 and the
// nonlinear coupling element of Eq. 5.2): the held element's cubic terms C_c·Δx³ + D_c·Δv³ make
// the feed-through output "force" nonlinear in the inputs x̃, ṽ. Every analytic derivative the
// runtime uses (the residual Jacobian for IDA, ∂y/∂z and ∂F/∂u for the monolithic baseline and
// the corrector, and D = ∂y/∂u for the consistent update of METHODS §1.1 / D-1) is checked
// against finite differences, with and without the cubic terms.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/model/subsystem_view.hpp"
#include "subsystem_checks.hpp"

namespace {

using namespace macrostep;

library::OscillatorMassParameters displacement_driven(double cubic_c, double cubic_d) {
  library::OscillatorMassParameters p;
  p.mass = 1.0;
  p.stiffness = 2e4;
  p.damping = 0.5;
  p.displacement_input = true;
  p.coupling_stiffness = 5e3;
  p.coupling_damping = 2.0;
  p.coupling_cubic_stiffness = cubic_c;
  p.coupling_cubic_damping = cubic_d;
  return p;
}

// Points with element strokes Δx of about 1e-3 m and Δv of about 0.3 m/s, where the cubic terms
// are as large as the linear ones for C_c = 5e9, D_c = 20.
std::vector<macrostep::testing::SubsystemPoint> points() {
  return {{0.0, {1e-3, 0.2}, {0.2, -3.0}, {-5e-4, -0.1}},
          {0.01, {-2e-3, -0.5}, {-0.5, 40.0}, {1e-4, 0.3}},
          {0.02, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}};
}

// D = ∂y/∂u, analytic against the base class's central differences of outputs().
void expect_feedthrough_matches_differences(const model::Subsystem& s,
                                            const macrostep::testing::SubsystemPoint& at) {
  const std::size_t ny = s.output_size(), nu = s.input_size();
  std::vector<double> analytic(ny * nu), fd(ny * nu);
  s.feedthrough_jacobian(at.t, at.z, at.u, analytic);
  s.model::Subsystem::feedthrough_jacobian(at.t, at.z, at.u, fd);
  for (std::size_t k = 0; k < analytic.size(); ++k) {
    EXPECT_NEAR(analytic[k], fd[k], 1e-6 * std::max(1.0, std::fabs(analytic[k]))) << k;
  }
}

TEST(OscillatorMass, CubicElementDerivativesMatchFiniteDifferences) {
  for (const auto& [c3, d3] : {std::pair{0.0, 0.0}, std::pair{5e9, 20.0}}) {
    const library::OscillatorMass mass(displacement_driven(c3, d3));
    EXPECT_TRUE(mass.has_feedthrough());
    EXPECT_EQ(mass.outputs_affine_in_inputs(), c3 == 0.0 && d3 == 0.0);
    for (const auto& at : points()) {
      for (double cj : {0.0, 1e4})
        macrostep::testing::expect_jacobian_matches_central_differences(mass, at, cj);
      macrostep::testing::expect_coupling_jacobians_match_differences(mass, at);
      expect_feedthrough_matches_differences(mass, at);
    }
  }
}

// The element force is C_c·Δx³ + D_c·Δv³ beyond the linear element, and D its exact derivative:
// a second-order Taylor check that holds only if the output is genuinely nonlinear in x̃.
TEST(OscillatorMass, CubicElementForceIsNonlinearInTheInputs) {
  const library::OscillatorMass mass(displacement_driven(5e9, 20.0));
  const std::vector<double> z{1e-3, 0.2};
  const std::vector<double> u{0.0, 0.0}, moved{5e-4, 0.0};
  std::vector<double> y(3), y_moved(3), d(6);
  mass.outputs(0.0, z, u, y);
  mass.outputs(0.0, z, moved, y_moved);
  EXPECT_DOUBLE_EQ(y[2], 5e3 * 1e-3 + 2.0 * 0.2 + 5e9 * 1e-9 + 20.0 * 0.008);
  mass.feedthrough_jacobian(0.0, z, u, d);
  // Linearised at u: y(moved) ≈ y + D·Δu is off by the curvature, 3C_c·Δx·δ² − C_c·δ³ = 3.125.
  const double linearised = y[2] + d[0 * 3 + 2] * 5e-4;
  EXPECT_NEAR(y_moved[2] - linearised, 3.0 * 5e9 * 1e-3 * 2.5e-7 - 5e9 * 1.25e-10, 1e-9);
  // Without the cubic terms the linear element's formula, bit for bit (old results unchanged).
  const library::OscillatorMass linear(displacement_driven(0.0, 0.0));
  linear.outputs(0.0, z, moved, y);
  EXPECT_EQ(y[2], 5e3 * (1e-3 - 5e-4) + 2.0 * (0.2 - 0.0));
}

TEST(OscillatorMass, NegativeCubicCoefficientIsRefused) {
  EXPECT_THROW(library::OscillatorMass(displacement_driven(-1.0, 0.0)), std::invalid_argument);
  EXPECT_THROW(library::OscillatorMass(displacement_driven(0.0, NAN)), std::invalid_argument);
}

}  // namespace

// A mode of a model with analytic coupling Jacobians (a model::SubsystemView with its own
// outputs, as model/events.hpp's modes are): the view keeps the base's sparse patterns and fills
// them by differences of its own equations. The finite-difference default filled the dense
// pattern into a buffer sized for the base's, and `reference` of a plugin with modes wrote past
// the monolithic system's scratch.
TEST(OscillatorMass, AModesCouplingJacobiansKeepTheBasesPatterns) {
  const library::OscillatorMass mass(displacement_driven(5e9, 20.0));
  class Doubled final : public model::SubsystemView {
   public:
    using SubsystemView::SubsystemView;
    void outputs(double t, std::span<const double> z, std::span<const double> u,
                 std::span<double> y) const override {
      base().outputs(t, z, u, y);
      for (double& v : y) v *= 2.0;
    }
  };
  const Doubled mode(mass);
  const model::EntryPattern y_pattern = mass.output_jacobian_pattern();
  ASSERT_LT(y_pattern.nonzeros(), mass.output_size() * mass.state_size()) << "a sparse pattern";
  EXPECT_EQ(mode.output_jacobian_pattern().row, y_pattern.row);
  EXPECT_EQ(mode.input_jacobian_pattern().column, mass.input_jacobian_pattern().column);
  for (const auto& at : points()) {
    std::vector<double> base_values(y_pattern.nonzeros()), mode_values(y_pattern.nonzeros());
    mass.output_jacobian(at.t, at.z, at.u, base_values);
    mode.output_jacobian(at.t, at.z, at.u, mode_values);
    for (std::size_t k = 0; k < base_values.size(); ++k) {
      EXPECT_NEAR(mode_values[k], 2.0 * base_values[k],
                  1e-6 * std::max(1.0, std::fabs(base_values[k])))
          << k;
    }
    // The mode's residual is the base's: its differences give the base's analytic ∂F/∂u.
    const std::size_t nu = mass.input_jacobian_pattern().nonzeros();
    std::vector<double> base_u(nu), mode_u(nu);
    mass.input_jacobian(at.t, at.z, at.zp, at.u, base_u);
    mode.input_jacobian(at.t, at.z, at.zp, at.u, mode_u);
    for (std::size_t k = 0; k < nu; ++k) {
      EXPECT_NEAR(mode_u[k], base_u[k], 1e-6 * std::max(1.0, std::fabs(base_u[k]))) << k;
    }
  }
  // The dense default refuses a buffer of another size instead of writing past it.
  std::vector<double> short_buffer(y_pattern.nonzeros());
  const auto all = points();
  const auto& point = all.front();
  EXPECT_THROW(mass.model::Subsystem::output_jacobian(point.t, point.z, point.u, short_buffer),
               std::logic_error);
}
