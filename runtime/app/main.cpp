// The `macrostep` command line (DESIGN.md "The macrostep command").
//
// Exit status: 0 success; 2 user error (command line, configuration, unreadable or
// incompatible files, a run mode that does not exist yet) reported before any work starts;
// 1 runtime failure (IDA fails, writing results fails, internal error).
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sundials/sundials_config.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/nrmse.hpp"
#include "macrostep/schemes/monolithic.hpp"

namespace {

constexpr int kUserError = 2;
constexpr int kRuntimeError = 1;

struct RunArgs {
  std::string config;
  bool monolithic = false;
  double stop_time = 0.0;
  double rtol = 0.0;
  std::string output;
  bool all_states = false;
  bool progress = false;
  CLI::Option* stop_time_opt = nullptr;
  CLI::Option* rtol_opt = nullptr;
};

struct CompareArgs {
  std::string result, reference;
};

std::string joined(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) s += ' ';
    s += argv[i];
  }
  return s;
}

// Loads the configuration, then runs the monolithic model (run --monolithic or reference).
int run_model(const RunArgs& args, bool reference, const std::string& command_line) {
  const macrostep::config::RunConfig config = macrostep::config::load_config(args.config);
  if (!reference && !args.monolithic) {
    fmt::print(stderr,
               "macrostep run: no co-simulation scheme is implemented yet (it comes with the "
               "next issue); run the whole model in one IDA with --monolithic\n");
    return kUserError;
  }
  macrostep::schemes::MonolithicOptions options;
  options.reference = reference;
  if (args.stop_time_opt != nullptr && args.stop_time_opt->count() > 0) {
    options.stop_time = args.stop_time;
  }
  if (args.rtol_opt != nullptr && args.rtol_opt->count() > 0) options.rtol = args.rtol;
  options.output_file = args.output;
  options.all_states = args.all_states;
  options.progress = args.progress ? macrostep::schemes::MonolithicOptions::Progress::kAlways
                                   : macrostep::schemes::MonolithicOptions::Progress::kAuto;
  options.command_line = command_line;
  const auto result = macrostep::schemes::run_monolithic(config, options);
  macrostep::schemes::print_summary(std::cout, config, options, result);
  return 0;
}

int compare(const CompareArgs& args) {
  const auto result = macrostep::output::read_csv(args.result);
  const auto reference = macrostep::output::read_csv(args.reference);
  const auto report = macrostep::output::compute_nrmse(result, reference);

  fmt::print("NRMSE of {} against {}: {} time points{}\n", args.result, args.reference,
             report.time_points,
             report.interpolated ? " (reference interpolated to the result's times)" : "");
  std::size_t width = 8;
  for (const auto& v : report.variables) width = std::max(width, v.name.size());
  for (const auto& v : report.variables) {
    fmt::print("  {:<{}}  {:.6e}\n", v.name, width, v.nrmse);
  }
  if (!report.excluded.empty()) {
    const std::size_t shown = std::min<std::size_t>(report.excluded.size(), 10);
    std::vector<std::string> names(report.excluded.begin(), report.excluded.begin() + shown);
    fmt::print("excluded, zero reference variance ({}): {}{}\n", report.excluded.size(),
               fmt::join(names, ", "), shown < report.excluded.size() ? ", ..." : "");
  }
  if (report.variables.empty()) {
    fmt::print("no variable has a varying reference; nothing to measure\n");
    return 0;
  }
  const auto starts = [](const char* prefix) {
    return [prefix](const std::string& name) { return name.rfind(prefix, 0) == 0; };
  };
  fmt::print("positions (x_*): {:.6e}, velocities (v_*): {:.6e}\n", report.norm_of(starts("x_")),
             report.norm_of(starts("v_")));
  fmt::print("NRMSE (2-norm over {} variables): {:.6e}\n", report.variables.size(), report.norm);
  return 0;
}

void add_run_options(CLI::App& cmd, RunArgs& args, bool reference) {
  cmd.add_option("CONFIG", args.config, "run configuration (TOML)")->required();
  if (!reference) {
    cmd.add_flag("--monolithic", args.monolithic, "integrate the whole model in one IDA");
    args.rtol_opt = cmd.add_option("--rtol", args.rtol,
                                   "integrator rtol (atol_pos/atol_vel follow unless set)");
  }
  args.stop_time_opt = cmd.add_option("--stop-time", args.stop_time, "end time [s]");
  cmd.add_option("--output", args.output,
                 reference ? "result CSV (default <config stem>.reference.csv)"
                           : "result CSV (default [output].file or <config stem>.csv)");
  cmd.add_flag("--all-states", args.all_states, "write every state, not only coupling bodies");
  cmd.add_flag("--progress", args.progress, "progress line on stderr even when not a terminal");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"macrostep: co-simulation runtime for oscillator chains and coupled models"};
  app.set_version_flag("--version",
                       fmt::format("macrostep {} (SUNDIALS {}, CLI11 {})", MACROSTEP_VERSION,
                                   SUNDIALS_VERSION, CLI11_VERSION));
  app.require_subcommand(1, 1);

  RunArgs run_args, reference_args;
  CompareArgs compare_args;
  auto* run = app.add_subcommand("run", "run a configuration (--monolithic: one IDA)");
  add_run_options(*run, run_args, false);
  auto* reference = app.add_subcommand(
      "reference", "tight-tolerance monolithic reference (rtol 1e-10, atol 1e-13 / 1e-10)");
  add_run_options(*reference, reference_args, true);
  auto* cmp = app.add_subcommand("compare",
                                 "NRMSE of a result against a reference (seed 000 "
                                 "Eq. 5.1)");
  cmp->add_option("RESULT", compare_args.result, "result CSV")->required();
  cmp->add_option("REFERENCE", compare_args.reference, "reference CSV")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    fmt::print(stderr, "macrostep: {}\nRun with --help for usage.\n", e.what());
    return kUserError;
  }

  const std::string command_line = joined(argc, argv);
  try {
    if (run->parsed()) return run_model(run_args, false, command_line);
    if (reference->parsed()) return run_model(reference_args, true, command_line);
    try {
      return compare(compare_args);
    } catch (const macrostep::output::OutputError& e) {
      fmt::print(stderr, "macrostep compare: {}\n", e.what());
      return kUserError;
    }
  } catch (const macrostep::config::ConfigError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kUserError;
  } catch (const macrostep::schemes::SetupError& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kUserError;
  } catch (const macrostep::ida::IntegrationError& e) {
    fmt::print(stderr, "macrostep: integration failed at t = {:.9g} s: {}\n", e.time(), e.what());
    return kRuntimeError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kRuntimeError;
  }
}
