// Explicit-scheme options the scheme tests and the executor tests both run with.
#pragma once

#include "macrostep/schemes/explicit_jacobi.hpp"

namespace macrostep::testing {

// Step-size (and order) control with estimator `e` at `rtol`, the chain start H = 1e-9 s.
inline schemes::SchemeOptions controlled(double t_end, control::Estimator e, double rtol) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kVariable;
  o.control.t_end = t_end;
  o.control.h = 1e-9;
  o.control.estimator = e;
  o.control.tolerances = control::ErrorTolerances::for_rtol(rtol);
  return o;
}

}  // namespace macrostep::testing
