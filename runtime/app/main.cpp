// The `macrostep` command line (DESIGN.md "The macrostep command").
//
// Exit status: 0 success; 2 user error (command line, configuration, unreadable or
// incompatible files, a run mode that does not exist yet) reported before any work starts;
// 1 runtime failure (IDA fails, writing results fails, internal error).
//
// main() parses the command line and dispatches to the commands, each in its own file
// (run_command.hpp, compare_command.hpp, topology_cleanup.hpp, ...), and maps their errors to
// the exit statuses of usage.hpp.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "compare_command.hpp"
#include "local_error_command.hpp"
#include "models_command.hpp"
#include "plot_command.hpp"
#include "run_command.hpp"
#include "run_options.hpp"
#include "stability_command.hpp"
#include "suggest_partition.hpp"
#include "sweep_command.hpp"
#include "topology_cleanup.hpp"
#include "usage.hpp"
#include "version.hpp"

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/config_keys.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/failure.hpp"
#include "macrostep/worker/worker.hpp"

namespace {

using namespace macrostep::app;

// A word from the command line as a message echoes it: at most 80 characters.
std::string clipped(const std::string& word) {
  return word.size() <= 80 ? word : word.substr(0, 80) + "...";
}

std::string joined_names(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string joined(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) s += ' ';
    s += argv[i];
  }
  return s;
}

// "unknown subcommand 'x' ..." when the first argument is neither an option nor one of the
// subcommands (CLI11 would say that a subcommand is required).
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  std::vector<std::string> listed;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() == word) return std::nullopt;
    if (!sub->get_group().empty()) listed.push_back(sub->get_name());  // not the hidden worker
  }
  return fmt::format("unknown subcommand '{}'; the subcommands are {}", clipped(word),
                     joined_names(listed));
}

// Every subcommand's parsed arguments and its CLI11 handle (the app owns the handles).
struct Commands {
  RunArgs run_args, reference_args;
  CompareArgs compare_args;
  std::string topology_config, topology_pin = "compact";
  macrostep::app::StabilityArgs stability_args;
  std::string resume_path;
  macrostep::app::PlotArgs plot_args;
  macrostep::app::SuggestPartitionArgs suggest_args;
  macrostep::app::SweepArgs sweep_args;
  macrostep::app::LocalErrorArgs local_error_args;
  std::string worker_segment;
  std::vector<std::size_t> worker_indices;  // one, or the group a worker process hosts
  int worker_segment_fd = -1;
  CLI::App *run = nullptr, *reference = nullptr, *topology = nullptr, *stability = nullptr,
           *resume = nullptr, *plot = nullptr, *cleanup = nullptr, *compare = nullptr,
           *suggest = nullptr, *models = nullptr, *config_keys = nullptr, *sweep = nullptr,
           *local_error = nullptr, *worker = nullptr;
};

// Declares the subcommands of DESIGN.md's command line on `app`, bound to `c` (which must
// outlive the parse).
void add_commands(CLI::App& app, Commands& c) {
  c.run = app.add_subcommand(
      "run", "co-simulate a configuration ([cosim]; --monolithic: the whole model in one IDA)");
  add_run_options(*c.run, c.run_args, false);
  c.reference = app.add_subcommand(
      "reference", "tight-tolerance monolithic reference (rtol 1e-10, atol 1e-13 / 1e-10)");
  add_run_options(*c.reference, c.reference_args, true);
  c.sweep = app.add_subcommand(
      "sweep",
      "co-simulations of a grid of configuration values (--grid KEY=V1,V2,...) in parallel, "
      "with one summary table: values, statistics, wall time, error against a reference");
  macrostep::app::add_sweep_options(*c.sweep, c.sweep_args);
  c.topology = app.add_subcommand(
      "topology", "what hwloc sees and, given a configuration, the placement it would get");
  c.topology->add_option("CONFIG", c.topology_config, "run configuration (TOML)");
  c.topology->add_option("--pin", c.topology_pin, macrostep::app::pin_help("compact"));
  c.stability = app.add_subcommand(
      "stability",
      "spectral radius over H of a co-simulation's recurrence (exact subsystems): the two-mass "
      "test model, or any configuration linearised at t0; the stable band and a PNG plot");
  macrostep::app::add_stability_options(*c.stability, c.stability_args);
  c.local_error = app.add_subcommand(
      "local-error",
      "the local error of one explicit macro step started from the exact history (a tight "
      "reference run) over a list of H, with the fitted slopes per group of variables");
  macrostep::app::add_local_error_options(*c.local_error, c.local_error_args);
  c.resume = app.add_subcommand(
      "resume", "continue a run from its checkpoint (--checkpoint-every), bit-identically");
  c.resume->add_option("CHECKPOINT", c.resume_path, "checkpoint file")->required();
  c.plot = app.add_subcommand(
      "plot",
      "PNG figures of a run: coupling variables and states, macro-step size and kappa, time "
      "breakdown (/usr/bin/python3 with matplotlib)");
  macrostep::app::add_plot_options(*c.plot, c.plot_args);
  c.suggest = app.add_subcommand(
      "suggest-partition",
      "cuts of a [model] chain that balance the subsystems and keep the cuts smooth, from a short "
      "trial; writes the suggested configuration");
  macrostep::app::add_suggest_partition_options(*c.suggest, c.suggest_args);
  c.cleanup = app.add_subcommand("cleanup", "remove this user's stale shared-memory segments");
  c.models = app.add_subcommand(
      "models",
      "every model with a parameter description: keys, types, defaults, units (Markdown)");
  c.config_keys = app.add_subcommand(
      "config-keys",
      "every table of a configuration file with the keys it accepts, one table a line");
  c.compare = app.add_subcommand("compare",
                                 "NRMSE of a result against a reference (seed 000 "
                                 "Eq. 5.1)");
  c.compare->add_option("RESULT", c.compare_args.result, "result CSV or .h5")->required();
  c.compare->add_option("REFERENCE", c.compare_args.reference, "reference CSV or .h5")->required();
  c.compare->add_option("--weights", c.compare_args.weights,
                        "how the result's rows count: equal (each row alike, default) | time "
                        "(each by the time it stands for, half of the intervals next to it: a "
                        "variable-step run's short steps count by their duration)");
  // Hidden: the subsystem process the process executor spawns (subsystems/worker).
  c.worker = app.add_subcommand("worker", "");
  c.worker->group("");
  c.worker->add_option("--segment", c.worker_segment)->required();
  c.worker->add_option("--index", c.worker_indices, "a subsystem (0-based); repeated for a group")
      ->required()
      ->take_all();
  c.worker->add_option("--segment-fd", c.worker_segment_fd,
                       "an inherited descriptor of the segment (attach after the name is gone)");
}

// Runs the parsed subcommand (not the worker); errors propagate to main's mapping.
int dispatch(Commands& c, int argc, char** argv, const std::string& command_line) {
  if (c.run->parsed()) {
    if (c.run_args.monolithic) return run_model(c.run_args, false, command_line);
    std::vector<std::string> arguments(argv + 2, argv + argc);  // before MPI may edit argv
#ifdef MACROSTEP_MPI_BRIDGE
    if (given(c.run_args.executor_opt) && c.run_args.executor == "mpi") {
      parse_executor(c.run_args.executor);
      return run_bridged(&argc, &argv, c.run_args, command_line, std::move(arguments));
    }
#endif
    return run_cosimulation(c.run_args, command_line, std::move(arguments));
  }
  if (c.resume->parsed()) return resume(c.resume_path, command_line);
  if (c.reference->parsed()) return run_model(c.reference_args, true, command_line);
  if (c.sweep->parsed()) return macrostep::app::sweep_command(c.sweep_args);
  if (c.topology->parsed()) {
    try {
      return macrostep::app::topology_command(c.topology_config, c.topology_pin);
    } catch (const std::invalid_argument& e) {  // --pin
      throw UsageError(e.what());
    }
  }
  if (c.cleanup->parsed()) return macrostep::app::cleanup_command();
  if (c.models->parsed()) {
    fmt::print("{}", macrostep::app::models_reference());
    return 0;
  }
  if (c.config_keys->parsed()) {
    for (const auto& t : macrostep::config::key_tables()) {
      fmt::print("{}: {}\n", t.table, fmt::join(t.keys, ", "));
    }
    return 0;
  }
  if (c.plot->parsed()) return macrostep::app::plot_command(c.plot_args);
  if (c.suggest->parsed()) {
    try {
      return macrostep::app::suggest_partition_command(c.suggest_args);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (c.local_error->parsed()) {
    return macrostep::app::local_error_command(c.local_error_args, command_line);
  }
  if (c.stability->parsed()) {
    try {
      return macrostep::app::stability_command(c.stability_args);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  try {
    return compare(c.compare_args);
  } catch (const macrostep::output::OutputError& e) {
    fmt::print(stderr, "macrostep compare: {}\n", e.what());
    return kUserError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"macrostep: co-simulation runtime for oscillator chains and coupled models"};
  app.set_version_flag("--version", version_text(),
                       "print the version, the git commit of the build and the library versions");
  app.require_subcommand(1, 1);
  Commands c;
  add_commands(app, c);

  if (const auto unknown = unknown_subcommand(app, argc, argv)) {
    fmt::print(stderr, "macrostep: {}\nRun with --help for usage.\n", *unknown);
    return kUserError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    fmt::print(stderr, "macrostep: {}\nRun with --help for usage.\n", e.what());
    return kUserError;
  }

  if (c.worker->parsed())
    return macrostep::worker::run_worker(c.worker_segment, c.worker_indices, c.worker_segment_fd);
  const std::string command_line = joined(argc, argv);
  try {
    return dispatch(c, argc, argv, command_line);
  } catch (const UsageError& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kUserError;
  } catch (const macrostep::config::ConfigError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kUserError;
  } catch (const macrostep::run::SetupError& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kUserError;
  } catch (const macrostep::checkpoint::CheckpointError& e) {
    fmt::print(stderr, "macrostep resume: {}\n", e.what());
    return kUserError;
  } catch (const macrostep::ida::IntegrationError& e) {
    fmt::print(stderr, "macrostep: {}\n", macrostep::run::failure_message(e));
    return kRuntimeError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kRuntimeError;
  }
}
