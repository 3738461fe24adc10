// The force/displacement two-mass oscillator with direct feed-through (METHODS §1.2, seed 000
// Eq. 2.7) that the feed-through tests of explicit Jacobi and Gauss–Seidel share: m1 = m2 = 1,
// c1 = 1e4, c2 = 2e4, c_c = 5e3, d_c = 2 (no ground dampers), x1(0) = 1e-3; subsystem "two" holds
// the coupling element and outputs its force. u = [x̃1, ṽ1, λ] in the order of the connections.
// The description only: each test appends the sections it needs.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>

#include "macrostep/analysis/dense.hpp"
#include "macrostep/analysis/stability.hpp"

namespace macrostep::testing {

// Its parameters, as the description below writes them.
inline constexpr double kFdC1 = 1e4, kFdC2 = 2e4, kFdCc = 5e3, kFdDc = 2.0;

// The same oscillator as the analysis's two-mass model (METHODS §1.2).
inline analysis::TwoMass force_displacement_two_mass() {
  analysis::TwoMass m;
  m.m1 = m.m2 = 1.0;
  m.c1 = kFdC1;
  m.c2 = kFdC2;
  m.cc = kFdCc;
  m.dc = kFdDc;
  return m;
}

// The closed form [x1, v1, x2, v2](t) = e^{A t} z0 with z0 = [1e-3, 0, 0, 0].
inline std::array<double, 4> force_displacement_exact_state(double t) {
  const analysis::Matrix e =
      analysis::expm(t * analysis::monolithic_matrix(force_displacement_two_mass()));
  return {e(0, 0) * 1e-3, e(1, 0) * 1e-3, e(2, 0) * 1e-3, e(3, 0) * 1e-3};
}

// Largest deviation of a state z = [x1, v1, x2, v2] from `exact`, relative to exact's largest
// entry.
inline double relative_state_error(std::span<const double> z, const std::array<double, 4>& exact) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < 4; ++i) {
    diff = std::max(diff, std::abs(z[i] - exact[i]));
    scale = std::max(scale, std::abs(exact[i]));
  }
  return diff / scale;
}

inline constexpr const char* kForceDisplacementTwoMass = R"(
[[subsystem]]
name = "one"
model = "oscillator_mass"
mass = 1.0
c = 1.0e4
force_input = true
x0 = 1.0e-3

[[subsystem]]
name = "two"
model = "oscillator_mass"
mass = 1.0
c = 2.0e4
displacement_input = true
coupling_c = 5.0e3
coupling_d = 2.0

[[connection]]
name = "x1"
law = "displacement"
from = ["one.x", "one.v"]
to = {position = "two.x_in", velocity = "two.v_in"}

[[connection]]
name = "lambda"
law = "signal"
from = "two.force"
to = "one.force"
)";

// The same oscillator with seed 000's nonlinear coupling element (Eq. 5.2) in "two":
// F = c_c·Δx + d_c·Δv + C_c·Δx³ + D_c·Δv³, so that its feed-through output is nonlinear in its
// inputs x̃1, ṽ1 (the consistent update of METHODS §1.1 / D-1 then evaluates it). With
// |Δx| ≈ 1e-3 and |Δv| ≈ 0.1 the cubic terms are as large as the linear ones.
inline constexpr double kFdCubicC = 5e9, kFdCubicD = 20.0;

// The element force of "two" at its state (x2, v2) with inputs (x̃1, ṽ1), as the model computes it.
inline double cubic_element_force(double x2, double v2, double x_tilde, double v_tilde) {
  const double dx = x2 - x_tilde, dv = v2 - v_tilde;
  return kFdCc * dx + kFdDc * dv + kFdCubicC * dx * dx * dx + kFdCubicD * dv * dv * dv;
}

inline std::string force_displacement_cubic_two_mass() {
  std::string text = kForceDisplacementTwoMass;
  const std::string at = "coupling_d = 2.0\n";
  text.insert(text.find(at) + at.size(), "coupling_C = 5.0e9\ncoupling_D = 20.0\n");
  return text;
}

}  // namespace macrostep::testing
