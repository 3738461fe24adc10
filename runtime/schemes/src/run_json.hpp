// JSON pieces shared by the run metadata of the monolithic and co-simulation runs. Private to
// the schemes library.
#pragma once

#include <nlohmann/json.hpp>

#include "macrostep/ida/integrator.hpp"

namespace macrostep::schemes {

// Work counters of one integrator (or summed over a subsystem's integrators).
inline nlohmann::ordered_json stats_json(const ida::AdvanceStats& s) {
  return nlohmann::ordered_json{{"micro_steps", s.steps},
                                {"residual_evals", s.residual_evals},
                                {"jacobian_evals", s.jacobian_evals},
                                {"nonlinear_iterations", s.nonlinear_iterations},
                                {"nonlinear_failures", s.nonlinear_failures},
                                {"error_test_failures", s.error_test_failures},
                                {"linear_setups", s.linear_setups},
                                {"solver_wall_ns", s.wall_ns}};
}

}  // namespace macrostep::schemes
