// The `macrostep` command line (DESIGN.md "The macrostep command").
//
// Exit status: 0 success; 2 user error (command line, configuration, unreadable or
// incompatible files, a run mode that does not exist yet) reported before any work starts;
// 1 runtime failure (IDA fails, writing results fails, internal error).
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sundials/sundials_config.h>
#include <CLI/CLI.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "plot_command.hpp"
#include "stability_command.hpp"
#include "suggest_partition.hpp"
#include "topology_cleanup.hpp"

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/control/step_size.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/nrmse.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/runner/jump_policy.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/worker/worker.hpp"
#ifdef MACROSTEP_MPI_BRIDGE
#include "macrostep/executors/mpi_executor.hpp"
#include "macrostep/ipc/mpi_world.hpp"
#endif

namespace {

constexpr int kUserError = 2;
constexpr int kRuntimeError = 1;

// SIGINT / SIGTERM / SIGHUP during `run` and `reference`: the first asks the run to stop after
// its current macro step or output row, with its files complete up to there (interrupt.hpp); a
// second one takes the default action at once (the workers die with the master). They are
// installed once the configuration is read: while it is parsed, a signal ends the process at
// once (nothing is written yet). The segment cleanup handlers run first and unlink the run's
// shared-memory segments on these and on fatal signals (SIGBUS, SIGSEGV, ...).
macrostep::run::StopFlag g_stop{0};

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load(std::memory_order_relaxed) != 0) {
    macrostep::run::on_repeated_stop_signal();  // a hung model in the master: its last words
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
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

struct RunArgs {
  std::string config;
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
  CLI::Option* handshake_timeout_opt = nullptr;
  CLI::Option* output_opt = nullptr;
  CLI::Option* master_hosts_first_opt = nullptr;
  CLI::Option* checkpoint_every_opt = nullptr;
  CLI::Option* checkpoint_opt = nullptr;
};

bool given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

// A command-line value that cannot be used: exit 2 with the message, before any work.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A word from the command line as a message echoes it: at most 80 characters.
std::string clipped(const std::string& word) {
  return word.size() <= 80 ? word : word.substr(0, 80) + "...";
}

std::string joined_names(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

// --scheme: the schemes of DESIGN.md.
macrostep::config::CosimScheme parse_scheme(const std::string& name) {
  if (const auto scheme = macrostep::config::parse_scheme(name)) return *scheme;
  throw UsageError(fmt::format("--scheme '{}' is not a scheme; allowed: {}", name,
                               macrostep::model::joined_names(macrostep::config::scheme_names())));
}

// --jacobian: a name of the interface-Jacobian registry.
std::string parse_jacobian(const std::string& name) {
  const auto& registry = macrostep::corrector::JacobianRegistry::instance();
  if (registry.find(name) != nullptr) return name;
  throw UsageError(fmt::format("--jacobian '{}' is not an interface Jacobian; allowed: {}", name,
                               macrostep::model::joined_names(registry.names())));
}

macrostep::control::Estimator parse_estimator(const std::string& name) {
  using macrostep::config::CosimScheme;
  using macrostep::control::Estimator;
  // The explicit scheme's estimators (with none), then the implicit ones.
  std::vector<std::string_view> explicit_names, implicit_names;
  for (const auto& [e, text] : macrostep::control::kEstimatorNames) {
    (macrostep::config::estimator_fits(CosimScheme::kExplicit, e) ? explicit_names : implicit_names)
        .push_back(text);
  }
  const std::string allowed = fmt::format("allowed: {} (explicit), {} (implicit)",
                                          macrostep::model::joined_names(explicit_names),
                                          macrostep::model::joined_names(implicit_names));
  if (const auto e = macrostep::control::parse_estimator(name)) return *e;
  if (name == "exH") {
    throw UsageError(
        fmt::format("--estimator exH: 'exH' is not an estimator name; the fixed macro step exH is "
                    "--estimator none --step-size H ({})",
                    allowed));
  }
  throw UsageError(fmt::format("--estimator '{}' is not an estimator name ({})", name, allowed));
}

macrostep::config::OrderSetting parse_order(const std::string& text) {
  using macrostep::config::kMaxCosimOrder;
  using macrostep::config::OrderSetting;
  if (text == "auto") return OrderSetting::auto_order();
  const bool digits =
      !text.empty() && text.size() <= 3 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int k = digits ? std::stoi(text) : -1;
  if (k < 0 || k > kMaxCosimOrder) {
    throw UsageError(
        fmt::format("--order must be auto or an integer 0..{} (got {})", kMaxCosimOrder, text));
  }
  return OrderSetting::fixed(k);
}

macrostep::config::ExecutorKind parse_executor(const std::string& name) {
  using macrostep::config::ExecutorKind;
  const auto executor = macrostep::config::parse_executor(name);
  if (executor && *executor != ExecutorKind::kMpi) return *executor;
  if (executor) {
#ifdef MACROSTEP_MPI_BRIDGE
    return *executor;
#else
    throw UsageError(
        "--executor mpi: this macrostep is built without the MPI bridge (MPI was not found, or "
        "MACROSTEP_WITH_MPI=OFF); install libopenmpi-dev and rebuild");
#endif
  }
  throw UsageError(
      fmt::format("--executor '{}' is not an executor; allowed: {} (under mpirun)", name,
                  macrostep::model::joined_names(macrostep::config::executor_names())));
}

// --output "" names no file ([output] file = "" is refused alike).
void check_output(const RunArgs& args) {
  if (given(args.output_opt) && args.output.empty()) {
    throw UsageError("--output must name a file (got an empty string)");
  }
}

macrostep::runner::JumpPolicy parse_jump_handling(const std::string& name) {
  if (const auto policy = macrostep::runner::parse_jump_policy(name)) return *policy;
  throw UsageError(
      fmt::format("--jump-handling '{}' is not a jump handling; allowed: {}", name,
                  macrostep::model::joined_names(macrostep::runner::jump_policy_names())));
}

// The co-simulation overrides of the command line, each value checked on its own.
macrostep::run::CosimOptions cosim_options(const RunArgs& args, const std::string& command_line) {
  check_output(args);
  macrostep::run::CosimOptions o;
  if (given(args.executor_opt)) o.executor = parse_executor(args.executor);
  if (given(args.scheme_opt)) o.scheme = parse_scheme(args.scheme);
  if (given(args.jacobian_opt)) o.jacobian = parse_jacobian(args.jacobian);
  if (given(args.estimator_opt)) o.estimator = parse_estimator(args.estimator);
  if (given(args.order_opt)) o.order = parse_order(args.order);
  if (given(args.approximation_opt)) {
    try {
      o.approximation = macrostep::polynomials::parse_approximation(args.approximation);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--approximation: ") + e.what());
    }
  }
  if (given(args.jump_handling_opt)) o.jump_handling = parse_jump_handling(args.jump_handling);
  if (given(args.min_micro_steps_opt)) o.min_micro_steps = args.min_micro_steps;
  if (given(args.rtol_opt)) o.rtol = args.rtol;
  if (given(args.step_size_opt)) o.step_size = args.step_size;
  if (given(args.threads_opt)) o.threads = args.threads;
  if (given(args.stop_time_opt)) o.stop_time = args.stop_time;
  o.pin = args.pin;
  if (given(args.hang_timeout_opt)) o.hang_timeout = args.hang_timeout;
  if (given(args.max_restarts_opt)) o.max_restarts = args.max_restarts;
  if (given(args.handshake_timeout_opt)) o.handshake_timeout = args.handshake_timeout;
  o.master_hosts_first = args.master_hosts_first;
  o.output_file = args.output;
  o.all_states = args.all_states;
  o.progress = args.progress ? macrostep::run::MonolithicOptions::Progress::kAlways
                             : macrostep::run::MonolithicOptions::Progress::kAuto;
  o.command_line = command_line;
  if (given(args.checkpoint_every_opt)) {
    try {
      o.checkpoint_every = macrostep::checkpoint::parse_interval(args.checkpoint_every);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  // Without --checkpoint-every, --checkpoint needs [output] checkpoint_every (checked with the
  // configuration).
  if (given(args.checkpoint_opt) && args.checkpoint.empty()) {
    throw UsageError("--checkpoint must name a file (got an empty string)");
  }
  o.checkpoint_path = args.checkpoint;
  return o;
}

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
  check_output(args);
  if (args.monolithic) {
    for (const auto* option :
         {args.scheme_opt, args.jacobian_opt, args.estimator_opt, args.order_opt,
          args.approximation_opt, args.step_size_opt, args.executor_opt, args.threads_opt,
          args.pin_opt, args.hang_timeout_opt, args.handshake_timeout_opt,
          args.master_hosts_first_opt, args.max_restarts_opt, args.jump_handling_opt,
          args.min_micro_steps_opt, args.checkpoint_every_opt, args.checkpoint_opt}) {
      if (given(option)) {
        throw UsageError(
            fmt::format("{} configures a co-simulation and does not apply to --monolithic",
                        option->get_name()));
      }
    }
  }
  const macrostep::config::RunConfig config = macrostep::config::load_config(args.config);
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
  } catch (const macrostep::schemes::SubsystemFailure& e) {
    // The subsystem is named as its description names it (the failure counts from 1).
    std::string named;
    if (e.subsystem() < config.system_description->subsystems.size()) {
      const auto& s = config.system_description->subsystems[e.subsystem()];
      named = fmt::format(" (subsystem {} is \"{}\": {})", e.subsystem() + 1, s.name,
                          macrostep::library::describe(s.model));
    }
    fmt::print(stderr, "macrostep: co-simulation failed at t = {:.9g} s: {}{}\n", e.time(),
               e.what(), named);
  } catch (const macrostep::executors::WorkerFailure& e) {
    fmt::print(stderr, "macrostep: co-simulation failed at t = {:.9g} s: {}\n", e.time(), e.what());
  } catch (const macrostep::control::StepSizeUnderflow& e) {
    fmt::print(stderr,
               "macrostep: co-simulation failed at t = {:.9g} s: the macro-step controller cannot "
               "meet the error test: H = {:.3e} s fell below H_min = {:.3e} s (tolerances too "
               "tight for the subsystem solver, or an unstable coupling)\n",
               e.time(), e.step(), e.minimum());
  }
  return kRuntimeError;
}

// `run CONFIG` without --monolithic: the co-simulation of the [cosim] table. `arguments`: the
// words after `run` (kept in checkpoints, so that `resume` runs the same command). `mpi`: rank 0
// of an MPI job (--executor mpi); `check_config` runs on the loaded configuration before anything
// starts.
int run_cosimulation(
    const RunArgs& args, const std::string& command_line, std::vector<std::string> arguments,
    std::optional<macrostep::run::MpiBridge> mpi = std::nullopt,
    const std::function<void(const macrostep::config::RunConfig&)>& check_config = {}) {
  macrostep::run::CosimOptions options = cosim_options(args, command_line);
  options.arguments = std::move(arguments);
  options.mpi = std::move(mpi);
  const macrostep::config::RunConfig config = macrostep::config::load_config(args.config);
  if (check_config) check_config(config);
  return cosimulate(config, options);
}

void add_run_options(CLI::App& cmd, RunArgs& args, bool reference);

// `resume CHECKPOINT`: the `run` command the checkpoint holds, with its configuration text and
// result file, continued from the checkpoint (cosimulation.hpp, CosimOptions::resume).
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
      macrostep::config::parse_config(checkpoint.config_text, checkpoint.config_path);
  fmt::print("resuming {} from {} at t = {:.9g} s ({} accepted macro steps)\n",
             checkpoint.config_path, path, checkpoint.time, checkpoint.accepted_steps);
  return cosimulate(config, options);
}

#ifdef MACROSTEP_MPI_BRIDGE
// The version every rank of a bridged run must share. MACROSTEP_BRIDGE_VERSION_OVERRIDE stands in
// for another build of macrostep on some ranks (the test of the version check).
std::string rank_version() {
  const char* other = std::getenv("MACROSTEP_BRIDGE_VERSION_OVERRIDE");
  return macrostep::executors::bridge_version(other != nullptr ? other : MACROSTEP_VERSION);
}

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
        throw macrostep::config::ConfigError(config.path, config.executor.ranks_line,
                                             "executor.ranks", e.what());
      }
    };
    return run_cosimulation(args, command_line, std::move(arguments), std::move(bridge), check);
  } catch (const std::exception& e) {
    ex::dismiss_agents(world, e.what());  // no-op once the executor has told them
    throw;
  }
}
#endif

int compare(const CompareArgs& args) {
  const auto result = macrostep::output::read_result_table(args.result);
  const auto reference = macrostep::output::read_result_table(args.reference);
  const auto report =
      macrostep::output::compute_nrmse(result, reference, {args.result, args.reference});

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
  const auto starts = [](const char* prefix) {
    return [prefix](const std::string& name) { return name.rfind(prefix, 0) == 0; };
  };
  fmt::print("positions (x_*): {:.6e}, velocities (v_*): {:.6e}\n", report.norm_of(starts("x_")),
             report.norm_of(starts("v_")));
  const bool has_couplings = std::any_of(report.variables.begin(), report.variables.end(),
                                         [&](const auto& v) { return starts("lambda_")(v.name); });
  if (has_couplings) {
    // States alone: the ERR of seed 000 §5.8 when the CSVs hold the coupling bodies.
    fmt::print(
        "states (x_*, v_*): {:.6e}, coupling variables (lambda_*): {:.6e}\n",
        report.norm_of([&](const std::string& n) { return starts("x_")(n) || starts("v_")(n); }),
        report.norm_of(starts("lambda_")));
  }
  fmt::print("NRMSE (2-norm over {} variables): {:.6e}\n", report.variables.size(), report.norm);
  return 0;
}

void add_run_options(CLI::App& cmd, RunArgs& args, bool reference) {
  cmd.add_option("CONFIG", args.config, "run configuration (TOML)")->required();
  if (!reference) {
    cmd.add_flag("--monolithic", args.monolithic, "integrate the whole model in one IDA");
    args.rtol_opt = cmd.add_option(
        "--rtol", args.rtol,
        "co-simulation: the macro-step controller's rtol (unset cosim atols follow); "
        "--monolithic: the integrator's rtol (unset solver atols follow)");
    args.scheme_opt = cmd.add_option(
        "--scheme", args.scheme,
        "co-simulation scheme: explicit (default) | implicit | semi-implicit | waveform | "
        "gauss-seidel");
    args.jacobian_opt = cmd.add_option(
        "--jacobian", args.jacobian,
        "interface Jacobian of implicit and semi-implicit: fd (perturbed runs) | sap | reuse | "
        "quasi-newton | heun");
    args.estimator_opt = cmd.add_option(
        "--estimator", args.estimator,
        "error estimator: none (fixed H) | exLE | exMD | exCV (explicit) | imMD | imCV");
    args.order_opt = cmd.add_option("--order", args.order,
                                    "polynomial degree: auto (order control) or K = 0..5");
    args.approximation_opt = cmd.add_option(
        "--approximation", args.approximation,
        "coupling variables on a macro step, for every connection: lagrange (default) | c0 | c1 "
        "(seed 001, degree = --order 0..3) | a seed-003 set such as const-2-3-opt, lin-2-3-opt, "
        "lin-2-3:p=P (fixed H); explicit scheme only");
    args.step_size_opt = cmd.add_option("--step-size", args.step_size,
                                        "macro step [s]: the fixed H (--estimator none) or H_init");
    args.jump_handling_opt = cmd.add_option(
        "--jump-handling", args.jump_handling,
        "the subsystems' IDA where the input polynomial jumps at a macro point: keep (its "
        "history, default) | shift (the history to the new polynomial) | restart | restart-auto");
    args.min_micro_steps_opt =
        cmd.add_option("--min-micro-steps", args.min_micro_steps,
                       "micro steps at most H/M (0 = no limit, else 2..1000)");
    args.executor_opt =
        cmd.add_option("--executor", args.executor,
                       "how subsystems run: processes (one per subsystem, default) | inprocess | "
                       "mpi (under mpirun: rank 0 the master, the other ranks node agents)");
    args.threads_opt =
        cmd.add_option("--threads", args.threads, "executor worker threads (0 = all cores)");
    args.pin_opt = cmd.add_option(
        "--pin", args.pin,
        "placement of the worker processes: none (default) | compact | scatter | a PU list "
        "such as 0,2-3 (master first); see `macrostep topology CONFIG`");
    args.hang_timeout_opt = cmd.add_option(
        "--hang-timeout", args.hang_timeout,
        "seconds a worker process may go without evaluating its model before it counts as hung "
        "and the run fails (default 60, 0 = never)");
    args.max_restarts_opt = cmd.add_option(
        "--max-restarts", args.max_restarts,
        "process executor: when a worker process dies or hangs, restart the workers from their "
        "last accepted states and repeat the step, at most N times (default 0: the run fails); "
        "the results are the same as without the failure");
    args.handshake_timeout_opt = cmd.add_option(
        "--handshake-timeout", args.handshake_timeout,
        "seconds a worker process may take to build its subsystem and report ready (default "
        "[executor] handshake_timeout, else 10 plus 1e-4 per state of the largest subsystem)");
    args.checkpoint_every_opt = cmd.add_option(
        "--checkpoint-every", args.checkpoint_every,
        "write a checkpoint (`macrostep resume` continues it, bit-identically) every so many "
        "seconds of wall time (30, 30s, 0.5s) or accepted macro steps (500steps), and a final "
        "one on SIGINT, SIGTERM or SIGHUP");
    args.checkpoint_opt =
        cmd.add_option("--checkpoint", args.checkpoint,
                       "the checkpoint file (default: beside the CSV, out.csv -> out.ckpt)");
    args.master_hosts_first_opt = cmd.add_flag(
        "--master-hosts-first", args.master_hosts_first,
        "process executor: the master runs subsystem 1 itself instead of a worker process (one "
        "process fewer to wake per macro step; the same results)");
  }
  args.stop_time_opt = cmd.add_option("--stop-time", args.stop_time, "end time [s]");
  args.output_opt =
      cmd.add_option("--output", args.output,
                     reference ? "result CSV or .h5 (default <config stem>.reference.csv)"
                               : "result CSV or .h5 (default [output].file or <config stem>.csv)");
  if (reference) {
    cmd.add_option("--at", args.at,
                   "write the reference at the time points of this result CSV (e.g. the macro "
                   "points of a co-simulation) instead of the output_interval grid");
  }
  cmd.add_flag("--all-states", args.all_states, "write every state, not only coupling bodies");
  cmd.add_flag("--progress", args.progress, "progress line on stderr even when not a terminal");
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
  std::string worker_segment;
  std::size_t worker_index = 0;
  int worker_segment_fd = -1;
  CLI::App *run = nullptr, *reference = nullptr, *topology = nullptr, *stability = nullptr,
           *resume = nullptr, *plot = nullptr, *cleanup = nullptr, *compare = nullptr,
           *suggest = nullptr, *worker = nullptr;
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
  c.topology = app.add_subcommand(
      "topology", "what hwloc sees and, given a configuration, the placement it would get");
  c.topology->add_option("CONFIG", c.topology_config, "run configuration (TOML)");
  c.topology->add_option("--pin", c.topology_pin,
                         "none | compact (default) | scatter | LIST (e.g. 0,2,4-7)");
  c.stability = app.add_subcommand(
      "stability",
      "spectral radius over H of the two-mass test model's recurrence (exact subsystems) for a "
      "scheme, approximation and decomposition; the largest stable H; a PNG plot");
  macrostep::app::add_stability_options(*c.stability, c.stability_args);
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
  c.compare = app.add_subcommand("compare",
                                 "NRMSE of a result against a reference (seed 000 "
                                 "Eq. 5.1)");
  c.compare->add_option("RESULT", c.compare_args.result, "result CSV or .h5")->required();
  c.compare->add_option("REFERENCE", c.compare_args.reference, "reference CSV or .h5")->required();
  // Hidden: the subsystem process the process executor spawns (subsystems/worker).
  c.worker = app.add_subcommand("worker", "");
  c.worker->group("");
  c.worker->add_option("--segment", c.worker_segment)->required();
  c.worker->add_option("--index", c.worker_index)->required();
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
  if (c.topology->parsed()) {
    try {
      return macrostep::app::topology_command(c.topology_config, c.topology_pin);
    } catch (const std::invalid_argument& e) {  // --pin
      throw UsageError(e.what());
    }
  }
  if (c.cleanup->parsed()) return macrostep::app::cleanup_command();
  if (c.plot->parsed()) return macrostep::app::plot_command(c.plot_args);
  if (c.suggest->parsed()) {
    try {
      return macrostep::app::suggest_partition_command(c.suggest_args);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
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
  app.set_version_flag("--version",
                       fmt::format("macrostep {} (SUNDIALS {}, CLI11 {})", MACROSTEP_VERSION,
                                   SUNDIALS_VERSION, CLI11_VERSION));
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
    return macrostep::worker::run_worker(c.worker_segment, c.worker_index, c.worker_segment_fd);
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
    fmt::print(stderr, "macrostep: integration failed at t = {:.9g} s: {}\n", e.time(), e.what());
    return kRuntimeError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
    return kRuntimeError;
  }
}
