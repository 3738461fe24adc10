// The commands that run a model (run_command.hpp): the stop-signal handling of a run, the
// monolithic and co-simulated runs, resuming a checkpoint, and the MPI bridge's rank 0.
#include "run_command.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/control/step_size.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/failure.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "usage.hpp"
#ifdef MACROSTEP_MPI_BRIDGE
#include "macrostep/executors/mpi_executor.hpp"
#include "macrostep/ipc/mpi_world.hpp"
#endif

namespace macrostep::app {

namespace {

// SIGINT / SIGTERM / SIGHUP during `run` and `reference`: the first asks the run to stop after
// its current macro step or output row, with its files complete up to there (interrupt.hpp); a
// second one takes the default action at once (the workers die with the master). They are
// installed once the configuration is read: while it is parsed, a signal ends the process at
// once (nothing is written yet). The segment cleanup handlers run first and unlink the run's
// shared-memory segments on these and on fatal signals (SIGBUS, SIGSEGV, ...).
// The same signal again within kSameRequestNs of the first is the same request, not a second
// one: `timeout` sends SIGTERM to the process and then to its process group, and a process
// whose threads take the two one by one would otherwise end without its final checkpoint.
macrostep::run::StopFlag g_stop{0};
std::atomic<std::int64_t> g_first_stop_ns{0};
constexpr std::int64_t kSameRequestNs = 100'000'000;

std::int64_t monotonic_ns() noexcept {  // clock_gettime is async-signal-safe
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

extern "C" void on_stop_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  const int first = g_stop.load(std::memory_order_relaxed);
  if (first != 0) {
    if (first == sig && now - g_first_stop_ns.load(std::memory_order_relaxed) < kSameRequestNs) {
      return;
    }
    macrostep::run::on_repeated_stop_signal();  // a hung model in the master: its last words
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_first_stop_ns.store(now, std::memory_order_relaxed);
  g_stop.store(sig, std::memory_order_relaxed);
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // file writes and waits go on; the run checks the flag itself
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
  // Chains to the handlers above (and to the default action of fatal signals).
  macrostep::ipc::install_segment_cleanup_handlers();
}

// Exit status of a run stopped by signal `sig`: the shell's convention for death by a signal.
int interrupted(const macrostep::run::RunInterrupted& e, const std::string& what) {
  std::string checkpoint;
  if (!e.checkpoint().empty()) {
    checkpoint = fmt::format("; `macrostep resume {}` continues the run", e.checkpoint());
  } else if (!e.checkpoint_problem().empty()) {
    checkpoint = fmt::format("; no checkpoint: {}", e.checkpoint_problem());
  }
  fmt::print(stderr, "macrostep: {} {}; the results up to there are written{}\n", what, e.what(),
             checkpoint);
  return 128 + e.signal();
}

// The co-simulation of `config` with `options` (run or resume), its summary and exit status.
int cosimulate(const macrostep::config::RunConfig& config, macrostep::run::CosimOptions& options) {
  options.stop = &g_stop;
  install_stop_handlers();
  try {
    const auto result = macrostep::run::run_cosimulation(config, options);
    macrostep::run::print_summary(std::cout, config, result);
    return 0;
  } catch (const macrostep::run::RunInterrupted& e) {
    return interrupted(e, "co-simulation");
  } catch (const std::exception& e) {
    const std::string failure = macrostep::run::failure_message(e, &config);
    if (failure.empty()) throw;  // not a failure of the run: main() reports it
    fmt::print(stderr, "macrostep: {}\n", failure);
  }
  return kRuntimeError;
}

// `run CONFIG` without --monolithic: the co-simulation of the [cosim] table. `arguments`: the
// words after `run` (kept in checkpoints, so that `resume` runs the same command). `mpi`: rank 0
// of an MPI job (--executor mpi); `check_config` runs on the loaded configuration before anything
// starts.
int cosimulate_run(
    const RunArgs& args, const std::string& command_line, std::vector<std::string> arguments,
    std::optional<macrostep::run::MpiBridge> mpi = std::nullopt,
    const std::function<void(const macrostep::config::RunConfig&)>& check_config = {}) {
  macrostep::run::CosimOptions options = cosim_options(args, command_line);
  options.arguments = std::move(arguments);
  options.mpi = std::move(mpi);
  const macrostep::config::RunConfig config =
      macrostep::config::load_config(args.config, args.sets);
  if (check_config) check_config(config);
  return cosimulate(config, options);
}

#ifdef MACROSTEP_MPI_BRIDGE
// The version every rank of a bridged run must share. MACROSTEP_BRIDGE_VERSION_OVERRIDE stands in
// for another build of macrostep on some ranks (the test of the version check).
std::string rank_version() {
  const char* other = std::getenv("MACROSTEP_BRIDGE_VERSION_OVERRIDE");
  return macrostep::executors::bridge_version(other != nullptr ? other : MACROSTEP_VERSION);
}

#endif

}  // namespace

// Loads the configuration, then runs the monolithic model (run --monolithic or reference).
int run_model(const RunArgs& args, bool reference, const std::string& command_line) {
  check_output(args);
  if (args.monolithic) {
    for (const auto* option :
         {args.scheme_opt, args.jacobian_opt, args.estimator_opt, args.order_opt,
          args.approximation_opt, args.step_size_opt, args.executor_opt, args.threads_opt,
          args.pin_opt, args.hang_timeout_opt, args.handshake_timeout_opt,
          args.master_hosts_first_opt, args.max_restarts_opt, args.processes_opt,
          args.jump_handling_opt, args.min_micro_steps_opt, args.checkpoint_every_opt,
          args.checkpoint_opt}) {
      if (given(option)) {
        throw UsageError(
            fmt::format("{} configures a co-simulation and does not apply to --monolithic",
                        option->get_name()));
      }
    }
  }
  const macrostep::config::RunConfig config =
      macrostep::config::load_config(args.config, args.sets);
  install_stop_handlers();
  macrostep::run::MonolithicOptions options;
  options.reference = reference;
  if (given(args.stop_time_opt)) options.stop_time = args.stop_time;
  if (given(args.rtol_opt)) options.rtol = args.rtol;
  options.output_file = args.output;
  options.all_states = args.all_states;
  options.progress = args.progress ? macrostep::run::MonolithicOptions::Progress::kAlways
                                   : macrostep::run::MonolithicOptions::Progress::kAuto;
  options.command_line = command_line;
  options.stop = &g_stop;
  if (!args.at.empty()) {
    try {
      options.times = macrostep::output::read_result_table(args.at).time;
    } catch (const macrostep::output::OutputError& e) {
      throw UsageError(fmt::format("--at: {}", e.what()));
    }
  }
  try {
    const auto result = macrostep::run::run_monolithic(config, options);
    macrostep::run::print_summary(std::cout, config, options, result);
    return 0;
  } catch (const macrostep::run::RunInterrupted& e) {
    return interrupted(e, reference ? "reference run" : "monolithic run");
  }
}

int run_cosimulation(const RunArgs& args, const std::string& command_line,
                     std::vector<std::string> arguments) {
  return cosimulate_run(args, command_line, std::move(arguments));
}

// `resume CHECKPOINT`: the `run` command the checkpoint holds, with its configuration text (its
// --set edits applied again) and result file, continued from the checkpoint (cosimulation.hpp,
// CosimOptions::resume).
int resume(const std::string& path, const std::string& command_line) {
  const macrostep::checkpoint::Checkpoint checkpoint = macrostep::checkpoint::read(path);
  CLI::App app;
  RunArgs args;
  add_run_options(app, args, false);
  std::vector<std::string> words(checkpoint.arguments.rbegin(), checkpoint.arguments.rend());
  try {
    app.parse(words);  // CLI11 takes the words in reverse order
  } catch (const CLI::ParseError& e) {
    throw macrostep::checkpoint::CheckpointError(
        fmt::format("{}: its run arguments do not parse: {}", path, e.what()));
  }
  if (args.monolithic) {
    throw macrostep::checkpoint::CheckpointError(
        fmt::format("{}: a checkpoint of a monolithic run", path));
  }
  macrostep::run::CosimOptions options = cosim_options(args, command_line);
  options.arguments = checkpoint.arguments;
  options.output_file = checkpoint.csv_path;
  options.checkpoint_path = path;  // further checkpoints replace this one
  options.resume = &checkpoint;
  const macrostep::config::RunConfig config =
      macrostep::config::parse_config(checkpoint.config_text, checkpoint.config_path, args.sets);
  fmt::print("resuming {} from {} at t = {:.9g} s ({} accepted macro steps)\n",
             checkpoint.config_path, path, checkpoint.time, checkpoint.accepted_steps);
  return cosimulate(config, options);
}

#ifdef MACROSTEP_MPI_BRIDGE
// `mpirun -np R macrostep run CONFIG --executor mpi`: rank 0 runs the co-simulation with the MPI
// bridge, every other rank is a node agent (mpi_executor.hpp). Misuse is a UsageError (exit 2)
// before anything starts; the agents are dismissed on every exit path of rank 0 before the
// executor exists.
int run_bridged(int* argc, char*** argv, const RunArgs& args, const std::string& command_line,
                std::vector<std::string> arguments) {
  namespace ex = macrostep::executors;
  if (!macrostep::ipc::mpi::launched_by_mpirun()) {
    throw UsageError(
        "--executor mpi needs an MPI job: start it as mpirun -np R macrostep run CONFIG "
        "--executor mpi (R >= 2: rank 0 is the master, every other rank a node agent; as root "
        "add --allow-run-as-root, with more ranks than cores --oversubscribe)");
  }
  macrostep::ipc::mpi::World world(argc, argv);
  const std::string version = rank_version();
  if (world.rank() != 0) return ex::run_node_agent(world, version);
  try {
    std::vector<ex::AgentInfo> agents;
    try {
      if (world.size() < 2) ex::place_subsystems(1, 0, {});  // throws: no agent
      agents = ex::greet_agents(world, version, std::chrono::seconds(60));
    } catch (const ex::BridgeUsageError& e) {
      throw UsageError(e.what());
    }
    std::vector<int> configured_ranks;  // [executor] ranks
    macrostep::run::MpiBridge bridge;
    bridge.make = [&world, &agents, &configured_ranks](const macrostep::run::BridgeRequest& rq,
                                                       nlohmann::ordered_json& placement_json,
                                                       std::string& placement_text) {
      ex::MpiOptions mo;
      mo.subsystem_ranks = configured_ranks;
      mo.pin = rq.pin;
      mo.pus_per_subsystem = rq.pus_per_subsystem;
      mo.stop = &g_stop;
      auto executor = std::make_unique<ex::MpiExecutor>(world, agents, *rq.system, rq.models, rq.u0,
                                                        rq.workers, mo);
      placement_json = executor->placement_json();
      placement_text = executor->describe_placement();
      return executor;
    };
    // The placement must fit the ranks started, before anything starts.
    const auto check = [&agents, &configured_ranks](const macrostep::config::RunConfig& config) {
      configured_ranks = config.executor.ranks;
      try {
        ex::place_subsystems(macrostep::config::subsystem_count(config), agents.size(),
                             configured_ranks);
      } catch (const ex::BridgeUsageError& e) {
        if (configured_ranks.empty() || agents.size() > macrostep::config::subsystem_count(config))
          throw UsageError(e.what());
        throw macrostep::config::error_at(config, config.executor.ranks_line, "executor.ranks",
                                          e.what());
      }
    };
    return cosimulate_run(args, command_line, std::move(arguments), std::move(bridge), check);
  } catch (const std::exception& e) {
    ex::dismiss_agents(world, e.what());  // no-op once the executor has told them
    throw;
  }
}
#endif

}  // namespace macrostep::app
