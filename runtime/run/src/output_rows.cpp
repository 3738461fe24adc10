// Rows on the output grid (output_rows.hpp).
#include "output_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/run/monolithic.hpp"

namespace macrostep::run {

namespace {

std::string rows_source(const config::RunConfig& config) {
  return config::origin(config, config.output.rows_line, "output.rows");
}

double grid_bound(const config::RunConfig& config) {
  return static_cast<double>(ipc::kMaxSamples) * config.simulation.output_interval;
}

// Grid rows the run cannot have (`why`): refused where the file asks for them, else macro points.
void without_grid(const config::RunConfig& config, CosimSettings& settings,
                  const std::string& why) {
  if (config.output.rows) throw SetupError(fmt::format("{}: {}", rows_source(config), why));
  settings.rows = config::RowTimes::kMacroPoints;
  settings.executor.output_interval = 0.0;
}

}  // namespace

void resolve_output_rows(const config::RunConfig& config, CosimSettings& settings) {
  settings.rows = config.output.rows.value_or(config::default_row_times(config));
  if (settings.rows != config::RowTimes::kGrid) return;
  const double interval = config.simulation.output_interval;
  settings.executor.output_interval = interval;
  if (settings.all_states) {
    return without_grid(
        config, settings,
        "rows = \"grid\" writes the outputs and coupling variables on the output grid; all "
        "states (--all-states, output.all_states) are written at macro points only: use rows = "
        "\"macro\" with them");
  }
  const control::MacroStepOptions& m = settings.scheme.control;
  if (m.mode == control::StepSizeMode::kFixed && m.h > grid_bound(config)) {
    return without_grid(
        config, settings,
        fmt::format("rows = \"grid\" takes at most {} output intervals per macro step, and the "
                    "fixed step {} s spans {:.0f} of output_interval = {} s: raise "
                    "output_interval or shorten the step",
                    ipc::kMaxSamples, m.h, m.h / interval, interval));
  }
}

void check_output_rows(const config::RunConfig& config, CosimSettings& settings,
                       const system::CoupledSystem& system, schemes::SchemeOptions& scheme) {
  if (settings.rows != config::RowTimes::kGrid) return;
  if (!config.output.rows && (system.has_feedthrough() || system.has_constraints())) {
    // Inside a step, a feed-through output follows its inputs' polynomial and a joint's
    // multiplier is interpolated: values of no solver's. A default grid holds only the
    // subsystems' own dense output; asked for, the grid writes them as they are.
    return without_grid(config, settings, "a feed-through subsystem or a joint");
  }
  for (std::size_t L = 0; L < system.subsystem_count(); ++L) {
    const model::Events* events = system.subsystem(L).events();
    if (events == nullptr || !events->advances_itself()) continue;
    return without_grid(
        config, settings,
        fmt::format("rows = \"grid\" needs every subsystem's values inside its macro step, and "
                    "subsystem \"{}\" (a Co-Simulation FMU) has them only at the ends of its "
                    "steps: use rows = \"macro\", with a step size of output_interval if rows on "
                    "the grid matter",
                    config.system_description->subsystems.at(L).name));
  }
  const double bound = grid_bound(config);
  for (control::MacroStepOptions* m : {&settings.scheme.control, &scheme.control}) {
    if (m->mode == control::StepSizeMode::kFixed) continue;
    m->step.h_max = std::min(m->step.h_max, bound);
    m->h = std::min(m->h, bound);
  }
}

}  // namespace macrostep::run
