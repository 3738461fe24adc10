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

// Why an explicit run whose step size fell below H_min could not go on, when the reason is
// stability rather than accuracy: the explicit macro step (κ = 0, the degree of the start-up
// and of the failure overrides) of the system linearised at t0 is stable only below an H far
// under the run's H_init (a stiff coupling: a time constant much shorter than the macro step).
// Names that time constant and that H and points to the implicit scheme. nullopt for another
// scheme, a system that is not linearised (as fixed_step_warning), or a stable band that reaches
// H_init.
std::optional<std::string> explicit_stability_limit(const config::RunConfig& config,
                                                    const CosimSettings& settings,
                                                    const system::CoupledSystem& system);

}  // namespace macrostep::run
