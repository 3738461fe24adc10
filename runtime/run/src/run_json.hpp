// Result files and JSON pieces shared by the monolithic and co-simulation runs. Private to
// the run library.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/run/interrupt.hpp"
#include "macrostep/run/monolithic.hpp"

namespace macrostep::run {

// Work counters of one integrator (or summed over a subsystem's integrators).
inline nlohmann::ordered_json stats_json(const ida::AdvanceStats& s) {
  // Mean and spread of the accepted micro steps' sizes (K-4.3); 0 without steps.
  const double n = static_cast<double>(s.steps);
  const double mean = s.steps > 0 ? s.step_sum / n : 0.0;
  const double spread =
      s.steps > 0 ? std::sqrt(std::max(0.0, s.step_square_sum / n - mean * mean)) : 0.0;
  return nlohmann::ordered_json{{"micro_steps", s.steps},
                                {"micro_step_mean_s", mean},
                                {"micro_step_std_s", spread},
                                {"residual_evals", s.residual_evals},
                                {"jacobian_evals", s.jacobian_evals},
                                {"nonlinear_iterations", s.nonlinear_iterations},
                                {"nonlinear_failures", s.nonlinear_failures},
                                {"error_test_failures", s.error_test_failures},
                                {"linear_setups", s.linear_setups},
                                {"events", s.events},
                                {"solver_wall_ns", s.wall_ns}};
}

// The "config" entry: the path, the configuration the run used as TOML, the --set edits that
// made it from the file, and with any of them the file as read.
inline nlohmann::ordered_json config_json(const config::RunConfig& config) {
  nlohmann::ordered_json j{{"path", config.path}, {"text", config.effective_text()}};
  auto& overrides = j["overrides"] = nlohmann::ordered_json::array();
  for (const auto& o : config.overrides) overrides.push_back(o.argument);
  if (!config.overrides.empty()) j["file_text"] = config.text;
  return j;
}

// The "error" entry of a run stopped by a signal.
inline nlohmann::ordered_json interrupted_json(const RunInterrupted& e) {
  nlohmann::ordered_json j{{"cause", "interrupted"},
                           {"signal", signal_name(e.signal())},
                           {"time", e.time()},
                           {"message", e.what()}};
  if (!e.checkpoint().empty()) j["checkpoint"] = e.checkpoint();
  if (!e.checkpoint_problem().empty()) j["checkpoint_problem"] = e.checkpoint_problem();
  return j;
}

// The metadata of a run that failed, as far as it can be written: a failure to write it (the
// disk that made the run fail is full) is reported on stderr, and the caller rethrows the run's
// own error, which matters more.
inline void write_json_after_failure(const std::string& path, const nlohmann::ordered_json& meta) {
  try {
    output::write_json(path, meta);
  } catch (const output::OutputError& e) {
    fmt::print(stderr, "macrostep: the run's metadata is not written either: {}\n", e.what());
  }
}

}  // namespace macrostep::run
