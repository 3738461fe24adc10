// The options of `macrostep run` and `macrostep reference` (DESIGN.md "The macrostep command"),
// and their translation into the co-simulation's overrides. Names of schemes, estimators,
// interface Jacobians, jump policies and executors come from each concept's own table; a wrong
// one is a UsageError that lists the table's names.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/cosimulation.hpp"

namespace macrostep::app {

struct RunArgs {
  std::string config;
  std::vector<std::string> sets;  // --set KEY=VALUE, in order (config::Override)
  bool monolithic = false;
  double stop_time = 0.0;
  double rtol = 0.0;
  double step_size = 0.0;
  int threads = 0;
  std::string scheme, jacobian, estimator, order, executor, approximation, jump_handling;
  int min_micro_steps = 0;
  std::string pin = "none";
  double hang_timeout = 60.0;
  int max_restarts = 0;
  std::string processes;
  double handshake_timeout = 0.0;
  bool master_hosts_first = false;
  std::string output;
  std::string at;  // reference --at RESULT.csv
  bool all_states = false;
  bool progress = false;
  std::string checkpoint_every, checkpoint;
  CLI::Option* stop_time_opt = nullptr;
  CLI::Option* rtol_opt = nullptr;
  CLI::Option* step_size_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  CLI::Option* scheme_opt = nullptr;
  CLI::Option* jacobian_opt = nullptr;
  CLI::Option* estimator_opt = nullptr;
  CLI::Option* jump_handling_opt = nullptr;
  CLI::Option* min_micro_steps_opt = nullptr;
  CLI::Option* order_opt = nullptr;
  CLI::Option* approximation_opt = nullptr;
  CLI::Option* executor_opt = nullptr;
  CLI::Option* pin_opt = nullptr;
  CLI::Option* hang_timeout_opt = nullptr;
  CLI::Option* max_restarts_opt = nullptr;
  CLI::Option* processes_opt = nullptr;
  CLI::Option* handshake_timeout_opt = nullptr;
  CLI::Option* output_opt = nullptr;
  CLI::Option* master_hosts_first_opt = nullptr;
  CLI::Option* checkpoint_every_opt = nullptr;
  CLI::Option* checkpoint_opt = nullptr;
};

// Declares the options of `run` (reference = false) or `reference` on `cmd`, bound to `args`
// (which must outlive the parse).
void add_run_options(CLI::App& cmd, RunArgs& args, bool reference);

// Declares --set KEY=VALUE (repeatable, one edit each) on `cmd` (run, reference, stability).
CLI::Option* add_set_option(CLI::App& cmd, std::vector<std::string>& sets);

// --output "" names no file ([output] file = "" is refused alike): UsageError.
void check_output(const RunArgs& args);

// --executor NAME: its executor; UsageError for an unknown name, and for mpi in a build without
// the MPI bridge.
config::ExecutorKind parse_executor(const std::string& name);

// The co-simulation overrides of the command line, each value checked on its own (UsageError).
run::CosimOptions cosim_options(const RunArgs& args, const std::string& command_line);

}  // namespace macrostep::app
