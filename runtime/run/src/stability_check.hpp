// The pre-run check of a fixed-step co-simulation: is H inside the stable band of the system
// linearised at t0 (analysis/coupled_stability.hpp)? A warning, not a refusal: the
// linearisation describes the start of a run, and a nonlinear model may leave it.
#pragma once

#include <optional>
#include <string>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// The warning for a fixed-H explicit or implicit run whose ρ(H) exceeds 1 + analysis::
// kWeakGrowth, naming the band's edge and what to do; nullopt when H is inside the band, the run
// is adaptive or Gauss–Seidel, the system has a plugin or FMU subsystem (user code is not run in
// the master before the run's guards exist), or it cannot be linearised (too many states,
// algebraic states, a constraint law): those are not checked.
std::optional<std::string> fixed_step_warning(const config::RunConfig& config,
                                              const CosimSettings& settings,
                                              const system::CoupledSystem& system);

}  // namespace macrostep::run
