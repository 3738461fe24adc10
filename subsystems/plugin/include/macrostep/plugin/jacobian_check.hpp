// The check of a subsystem's analytic Jacobians against central finite differences of the
// functions they differentiate (docs/guide/plugins.md "The Jacobian check"). A plugin's Jacobian
// that is wrong makes IDA's Newton iteration converge slowly or not at all, and --monolithic
// inaccurate, without any error; the loader (plugin_checks.hpp) refuses it instead.
//
// Which Jacobians (model::Subsystem), each on its own pattern:
//  - dF/dz and dF/dz': jacobian() at cj = 0, and (jacobian() at cj = kCheckCj − at cj = 0) /
//    kCheckCj, on jacobian_pattern();
//  - dy/dz: output_jacobian() on output_jacobian_pattern();
//  - dF/du: input_jacobian() on input_jacobian_pattern();
//  - dy/du: feedthrough_jacobian() (dense), only with has_feedthrough().
// The finite-difference defaults of the last three pass by construction; they are checked all
// the same (a model cannot tell which it overrides), at the cost of evaluating them once.
//
// Cost: the columns are grouped so that no two columns of a group share a row of the pattern
// (greedy colouring, as Curtis, Powell and Reid): two evaluations of the function per group and
// Jacobian, e.g. three groups of residual() for a banded chain of any length. A row that changes
// outside the pattern when a group moves is then resolved column by column, and so is a group
// with a mismatch; an entry outside the pattern whose difference is not zero is a mismatch
// (its analytic value is 0). A pattern with a full row needs one group per column.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::plugin {

// The relative tolerance. Central differences with the step of kRelativeStep (the cube root of
// the machine epsilon) times the variable's scale agree with a correct derivative of a smooth
// model to about eps^(2/3) ≈ 4e-11 of its size (truncation and rounding balanced); 1e-4 leaves
// six orders of magnitude for curvature and poorly scaled variables. A Jacobian error below it
// changes the contraction of a Newton iteration by about as much: harmless. The mistakes a user
// makes (a sign, a factor, a missing cj, a forgotten term) are errors of order 1.
inline constexpr double kJacobianTolerance = 1e-4;
// Entries are compared relative to the largest weighted entry of their row (weighted by the
// column variable's scale: the residual's change for a change of the variable on its own
// scale). Below kJacobianNoiseFloor times the largest weighted entry of the whole matrix a
// difference is taken as rounding (rows whose terms cancel at the initial state).
inline constexpr double kJacobianNoiseFloor = 1e-8;
// cj of the second jacobian() evaluation: not 1, so that a term that forgot cj or squared it is
// told apart; of the order of IDA's cj = alpha/h.
inline constexpr double kCheckCj = 1e3;

enum class JacobianKind { kStates, kDerivatives, kOutputs, kInputs, kFeedthrough };

// The worst disagreeing entry of one Jacobian (row and column index the function's value and
// variable: F's row or output; state, derivative or input), how many entries disagree and how
// many were compared.
struct JacobianMismatch {
  JacobianKind kind = JacobianKind::kStates;
  std::size_t row = 0, column = 0;
  bool in_pattern = true;  // false: the entry is outside the declared pattern (analytic 0)
  double analytic = 0.0, differences = 0.0;
  std::size_t mismatched = 0, checked = 0;
};

// The point of the check: the initial time, state and derivative, and the inputs.
struct JacobianPoint {
  double t = 0.0;
  std::vector<double> z, zp, u;
};

// Every Jacobian of `s` (the list above) that disagrees at `at`, in that order; empty if all
// agree. The model's own exceptions pass through.
std::vector<JacobianMismatch> jacobian_mismatches(const model::Subsystem& s,
                                                  const JacobianPoint& at);

// One line about a mismatch, with the entry by the model's names: "dF/dz (jacobian() at cj = 0):
// the entry (r[1] (the row of state "v"), state "x") is -100 analytically but 100 by central
// differences (1 of 4 entries differ)".
std::string describe(const model::Subsystem& s, const JacobianMismatch& m);

}  // namespace macrostep::plugin
