// `macrostep stability` (DESIGN.md "The macrostep command"; METHODS.md §7.1, §7.4): the spectral
// radius of a co-simulation's one-step recurrence over a grid of macro-step sizes, the edge of
// the stable band from small H and the largest stable H — as text, as a CSV and as a PNG plot
// (tools/stability_plot.py run by /usr/bin/python3). Without a configuration, or with the
// two-mass chain, the two-mass test model for a scheme, an approximation and a decomposition
// (analysis/stability.hpp); any other configuration is linearised at t0
// (analysis/coupled_stability.hpp) and analysed for its scheme, approximation and order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace macrostep::app {

struct StabilityArgs {
  std::string config;  // a run configuration (optional): two-mass chain or described system
  std::vector<std::string> sets;  // --set KEY=VALUE edits of it (config::Override)
  std::string decomposition = "ff", scheme, approximation;  // scheme empty: the default
  // Gauss–Seidel's end value, "converged" | "sequential"; empty: the configuration's
  // cosim.gauss_seidel, else converged.
  std::string gauss_seidel;
  std::optional<int> order;
  std::optional<double> m1, m2, c1, c2, cc, d1, d2, dc;
  std::optional<double> h_min, h_max, omega_min, omega_max;
  std::size_t points = 100;
  std::string plot, csv;  // empty plot: <config stem>.stability.png, or stability.png
  bool no_plot = false;
};

// Adds the subcommand's options to `cmd`.
void add_stability_options(CLI::App& cmd, StabilityArgs& args);

// Runs the analysis and prints it. Throws std::invalid_argument for bad options and systems the
// analysis cannot linearise (exit 2) and config::ConfigError for a bad configuration; returns 1
// if the plot could not be made (the text and CSV are complete).
int stability_command(const StabilityArgs& args);

}  // namespace macrostep::app
