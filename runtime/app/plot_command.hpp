// `macrostep plot RESULT... [--dir DIR]`: the standard figures of a run (tools/plot_run.py run by
// /usr/bin/python3): coupling variables and states over time, macro-step size and kappa with
// the rejected attempts (from the steps file), and the time breakdown per subsystem.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace macrostep::app {

struct PlotArgs {
  std::vector<std::string> results;  // STEM.csv, STEM.json or STEM.h5 of each run
  std::string dir;                   // where the PNGs go (created); empty: beside the result
  // A result to draw every run over (STEM.reference.png, the difference below); empty: none.
  std::string reference;
};

// Adds the subcommand's options to `cmd`.
void add_plot_options(CLI::App& cmd, PlotArgs& args);

// Makes the plots and prints their paths. Returns 0, or 2 after one line on stderr when the
// result, the interpreter, matplotlib or the script is missing or the file is not a result.
int plot_command(const PlotArgs& args);

}  // namespace macrostep::app
