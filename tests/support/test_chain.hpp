// The nonlinear test chain of the scheme, executor and runner tests, and their IDA tolerances:
// K-5.3-like element scales (c = 2.5e6 N/m, cubic terms), 50 g masses, random initial positions and
// velocities; stiff enough that IDA takes several micro steps per macro step, small enough for fast
// tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/chain_spec.hpp"

namespace macrostep::testing {

inline library::ChainParameters test_chain(std::size_t masses, std::uint64_t seed = 11) {
  library::ChainSpec s;
  s.masses = masses;
  s.mass = library::ValueSpec::fixed(5e-2);
  s.element = {2.5e6, 25.0, 1e10, 1e-4, 3.0, 3.0, 0.0, 0.0, 1};
  s.x0 = library::ValueSpec::uniform(-1e-4, 1e-4);
  s.v0 = library::ValueSpec::uniform(-1.0, 1.0);
  s.seed = seed;
  return library::realize(s);
}

// The 50-mass chain of seed 000 Table 5.1 with the §5.1 forcing (MODELS K-5.1): linear, or with
// the nonlinear element terms of the study.
inline library::ChainParameters k51_chain(bool nonlinear) {
  library::ChainSpec s;
  s.masses = 50;
  s.mass = library::ValueSpec::fixed(10.0);
  s.element.c = 1e6;
  s.element.d = 1e2;
  if (nonlinear) {
    s.element.C = 1e12;
    s.element.D = 1.0;
    s.element.ex = 6.0;
    s.element.ev = 3.0;
  }
  s.right = library::EndCondition::kFree;
  library::ForceGroupSpec f;
  f.type = library::ForceType::kHarmonic;
  f.selection.kind = library::MassSelection::Kind::kList;
  f.selection.masses = {50};
  f.amplitude = library::ValueSpec::fixed(5e7);
  f.omega = library::ValueSpec::fixed(500.0);
  f.phase = library::ValueSpec::fixed(0.0);
  s.forces.push_back(f);
  return library::realize(s);
}

// IDA tolerances tight enough that the subsystems' own error does not hide what a test of the
// executors compares (rtol 1e-8, atol_pos = 1e-3 rtol, atol_vel = rtol).
inline ida::IntegratorOptions tight_solver() {
  ida::IntegratorOptions io;
  io.rtol = 1e-8;
  io.atol_pos = 1e-11;
  io.atol_vel = 1e-8;
  return io;
}

// Two bodies between walls coupled by a linear spring (force/force, seed 000 §2.1.1): m = (1, 2)
// kg, c = (1e4, 5e3, 2e4) N/m for wall, coupling and wall element, no damping, x0 = (1e-3,
// −2e-3) m, v0 = (0.1, 0) m/s. Cut in the middle, each body is a linear oscillator with a closed-
// form response to a constant input.
inline library::ChainParameters linear_two_mass() {
  library::ChainParameters p;
  p.mass = {1.0, 2.0};
  p.element = {{1e4, 0, 0, 0, 3, 3}, {5e3, 0, 0, 0, 3, 3}, {2e4, 0, 0, 0, 3, 3}};
  p.forces.resize(2);
  p.x0 = {1e-3, -2e-3};
  p.v0 = {0.1, 0.0};
  return p;
}

// IDA tolerances of a reference (rtol 1e-12): for tests that compare against a closed form, so
// that the subsystems' own error stays far below what they check.
inline ida::IntegratorOptions reference_solver() {
  ida::IntegratorOptions io;
  io.rtol = 1e-12;
  io.atol_pos = 1e-15;
  io.atol_vel = 1e-12;
  return io;
}

}  // namespace macrostep::testing
