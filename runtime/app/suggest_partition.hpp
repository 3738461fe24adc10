// `macrostep suggest-partition CONFIG`: cut positions for a [model] chain that balance the
// subsystems' load and keep the cuts where the coupling forces are smooth, from a short trial
// (beyond the seeds; the model and the search: analysis/partition_search.hpp).
//
// Two trial runs over [0, trial time]: the co-simulation of the configured partition (its
// [cosim] settings, in-process unless --executor processes), which measures each subsystem's
// micro steps and solver time, the macro-step count and the master's time per attempt; and the
// whole chain in one IDA at 1/100 of [solver]'s tolerances, sampled at the trial's mean macro
// step, whose element forces give every element's cut indicator. Prints both measurements, the
// prediction for the configured and the suggested cuts (macro steps, loads, idle share, wall
// time on the cores), the longest-first schedule of the subsystems on the cores, and writes the
// configuration with the suggested [partition] sizes.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace macrostep::app {

struct SuggestPartitionArgs {
  std::string config;
  std::size_t subsystems = 0;  // 0: as many as the configuration has
  double trial_time = 0.0;     // 0: a tenth of [simulation] end_time
  unsigned cores = 0;          // 0: the usable PUs hwloc sees
  std::string output;          // empty: <config stem>.suggested.toml in the working directory
  std::string executor = "inprocess";  // of the trial co-simulation: inprocess | processes
  int window = 2;                      // trials with the configured cuts moved by ±1..±window
  std::string indicators;              // non-empty: a CSV of every element's cut indicator
};

// Adds the subcommand's options to `cmd`.
void add_suggest_partition_options(CLI::App& cmd, SuggestPartitionArgs& args);

// Runs the trials and writes the suggestion; returns 0. Throws std::invalid_argument for bad
// options (exit 2), config::ConfigError for a configuration that cannot be cut (a
// [[subsystem]] description, fewer than two subsystems), and the run's own exceptions when a
// trial fails.
int suggest_partition_command(const SuggestPartitionArgs& args);

}  // namespace macrostep::app
