// Rows on the output grid ([output] rows = "grid"; private to the run library): what such a run
// needs of its settings and of its system.
#pragma once

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// With rows = "grid": the nominal runs sample their outputs on the output grid
// (executors::ExecutorOptions::output_interval), and the macro step spans at most
// ipc::kMaxSamples output intervals (h_max lowered to it; a fixed step beyond it is refused), the
// same for every executor. SetupError for --all-states (states are written at macro points
// only). Call after the scheme options and all_states are resolved.
void resolve_output_rows(const config::RunConfig& config, CosimSettings& settings);

// With rows = "grid": SetupError naming a subsystem that advances itself (a Co-Simulation FMU:
// no dense output inside its step).
void check_output_rows(const config::RunConfig& config, const CosimSettings& settings,
                       const system::CoupledSystem& system);

}  // namespace macrostep::run
