// The force/displacement two-mass oscillator with direct feed-through (METHODS §1.2, seed 000
// Eq. 2.7) that the feed-through tests of explicit Jacobi and Gauss–Seidel share: m1 = m2 = 1,
// c1 = 1e4, c2 = 2e4, c_c = 5e3, d_c = 2 (no ground dampers), x1(0) = 1e-3; subsystem "two" holds
// the coupling element and outputs its force. u = [x̃1, ṽ1, λ] in the order of the connections.
// The description only: each test appends the sections it needs.
#pragma once

namespace macrostep::testing {

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

}  // namespace macrostep::testing
