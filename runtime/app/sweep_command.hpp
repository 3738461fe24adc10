// `macrostep sweep CONFIG --grid KEY=V1,V2,... [--grid ...] [--set KEY=VALUE ...] [--jobs N]
// [--reference REF [--weights equal|time]] [--dir DIR]`: the co-simulations of a grid of
// configuration values (docs/reference/commands.md). Every combination of the --grid values is one
// case, the run of CONFIG with the --set edits and one edit per grid key; the cases run as
// `macrostep run` processes, in-process on one thread each, N at a time, and one summary table
// holds each case's values, status, statistics, wall time and its error against the reference.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace macrostep::app {

struct SweepArgs {
  std::string config;
  std::vector<std::string> grid;  // KEY=VALUES, one axis each
  std::vector<std::string> sets;  // --set edits of every case
  std::size_t jobs = 0;           // cases at once; 0: the CPUs this process may use
  std::string reference;          // a result table to compare every case with (optional)
  std::string weights = "equal";  // how the NRMSE counts the rows: output::kRowWeightNames
  std::string dir;                // empty: <config stem>.sweep
};

// Adds the subcommand's options to `cmd`.
void add_sweep_options(CLI::App& cmd, SweepArgs& args);

// Checks every case's configuration, runs the cases, prints a progress line per finished case
// on stderr and the summary on stdout, and writes DIR/summary.csv. Returns 0 when every case
// completed, 1 when one failed, 128 + the signal after SIGINT, SIGTERM or SIGHUP (the running
// cases are stopped with it and keep their files; the summary lists what ran). Throws UsageError
// for a bad --grid, --jobs, --dir, --reference or --weights, config::ConfigError for a case whose
// configuration is refused: before anything runs.
int sweep_command(const SweepArgs& args);

}  // namespace macrostep::app
