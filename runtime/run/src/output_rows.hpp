// Rows on the output grid ([output] rows = "grid"; private to the run library): what such a run
// needs of its settings and of its system.
#pragma once

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// Chooses settings.rows: [output] rows, else config::default_row_times. Grid rows need the outputs
// alone (not all states) and a macro step of at most ipc::kMaxSamples output intervals: what the
// file asks for and cannot have is refused (SetupError naming output.rows), a default grid falls
// back to macro points. With the grid, executor.output_interval is set (the nominal runs sample
// their outputs on it). Call after the scheme options and all_states are resolved.
void resolve_output_rows(const config::RunConfig& config, CosimSettings& settings);

// With grid rows and the built system: a default grid falls back to macro points for a system
// with feed-through subsystems or a constraint (a joint), whose values inside a step are not
// the solvers' own; a subsystem that advances itself (a Co-Simulation FMU, no values inside its
// steps) is refused where the file asks for the grid, else the rows fall back to macro points;
// otherwise the macro step is bounded to ipc::kMaxSamples output intervals
// (h_max of settings.scheme and of `scheme`, the same for every executor).
void check_output_rows(const config::RunConfig& config, CosimSettings& settings,
                       const system::CoupledSystem& system, schemes::SchemeOptions& scheme);

}  // namespace macrostep::run
