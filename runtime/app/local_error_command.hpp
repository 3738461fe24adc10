// `macrostep local-error` (DESIGN.md "The macrostep command"; METHODS §7.6): the local error of
// one macro step of the explicit schemes started from the exact history, over a list of
// macro-step sizes, with the fitted slopes per group of variables (run/local_error.hpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "run_options.hpp"

namespace macrostep::app {

struct LocalErrorArgs {
  RunArgs run;             // CONFIG, --set, --scheme, --order, --approximation (the rest unused)
  std::string step_sizes;  // --step-sizes H1,H2,...
  std::string at;          // --at T1,T2,...
  double tolerance = 1e-12;
};

// Adds the subcommand's options to `cmd`, bound to `args`.
void add_local_error_options(CLI::App& cmd, LocalErrorArgs& args);

// Measures and prints. Throws UsageError for bad values, config::ConfigError and
// run::SetupError for configurations the mode cannot measure, std::runtime_error when the
// reference or a step fails.
int local_error_command(const LocalErrorArgs& args, const std::string& command_line);

}  // namespace macrostep::app
