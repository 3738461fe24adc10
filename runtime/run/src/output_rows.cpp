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

}  // namespace

void resolve_output_rows(const config::RunConfig& config, CosimSettings& settings) {
  if (config.output.rows != config::RowTimes::kGrid) return;
  if (settings.all_states) {
    throw SetupError(fmt::format(
        "{}: rows = \"grid\" writes the outputs and coupling variables on the output grid; all "
        "states (--all-states, output.all_states) are written at macro points only: use rows = "
        "\"macro\" with them",
        rows_source(config)));
  }
  const double interval = config.simulation.output_interval;
  const double bound = static_cast<double>(ipc::kMaxSamples) * interval;
  control::MacroStepOptions& m = settings.scheme.control;
  if (m.mode == control::StepSizeMode::kFixed) {
    if (m.h > bound) {
      throw SetupError(fmt::format(
          "{}: rows = \"grid\" takes at most {} output intervals per macro step, and the fixed "
          "step {} s spans {:.0f} of output_interval = {} s: raise output_interval or shorten "
          "the step",
          rows_source(config), ipc::kMaxSamples, m.h, m.h / interval, interval));
    }
  } else {
    m.step.h_max = std::min(m.step.h_max, bound);
    m.h = std::min(m.h, bound);
  }
  settings.executor.output_interval = interval;
}

void check_output_rows(const config::RunConfig& config, const CosimSettings& settings,
                       const system::CoupledSystem& system) {
  if (settings.executor.output_interval <= 0.0) return;
  for (std::size_t L = 0; L < system.subsystem_count(); ++L) {
    const model::Events* events = system.subsystem(L).events();
    if (events == nullptr || !events->advances_itself()) continue;
    throw SetupError(fmt::format(
        "{}: rows = \"grid\" needs every subsystem's values inside its macro step, and subsystem "
        "\"{}\" (a Co-Simulation FMU) has them only at the ends of its steps: use rows = "
        "\"macro\", with a step size of output_interval if rows on the grid matter",
        rows_source(config), config.system_description->subsystems.at(L).name));
  }
}

}  // namespace macrostep::run
