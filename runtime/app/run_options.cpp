// The options of `run` and `reference` and the co-simulation overrides they give
// (run_options.hpp).
#include "run_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/runner/jump_policy.hpp"
#include "usage.hpp"

namespace macrostep::app {

namespace {

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

macrostep::runner::JumpPolicy parse_jump_handling(const std::string& name) {
  if (const auto policy = macrostep::runner::parse_jump_policy(name)) return *policy;
  throw UsageError(
      fmt::format("--jump-handling '{}' is not a jump handling; allowed: {}", name,
                  macrostep::model::joined_names(macrostep::runner::jump_policy_names())));
}

}  // namespace

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

void check_output(const RunArgs& args) {
  if (given(args.output_opt) && args.output.empty()) {
    throw UsageError("--output must name a file (got an empty string)");
  }
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
  if (given(args.processes_opt)) o.processes = args.processes;
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

CLI::Option* add_set_option(CLI::App& cmd, std::vector<std::string>& sets) {
  return cmd
      .add_option("--set", sets,
                  "KEY=VALUE: set a key of the configuration as if the file said so, checked the "
                  "same way (repeatable): cosim.rtol=1e-5, cosim.scheme=implicit, "
                  "subsystem.motor.inertia=[0.05,0.02], model.force.1.omega=300; "
                  "--scheme, --rtol and the other flags apply over it")
      ->expected(1)
      ->allow_extra_args(false)  // one word each: `--set K=V CONFIG` leaves CONFIG alone
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_run_options(CLI::App& cmd, RunArgs& args, bool reference) {
  cmd.add_option("CONFIG", args.config, "run configuration (TOML)")->required();
  add_set_option(cmd, args.sets);
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
        "quasi-newton | heun | broyden");
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
        "the subsystems' IDA where the input polynomial jumps at a macro point: shift (the "
        "history to the new polynomial, default) | keep (its history) | restart | restart-auto");
    args.min_micro_steps_opt =
        cmd.add_option("--min-micro-steps", args.min_micro_steps,
                       "micro steps at most H/M (0 = no limit, else 2..1000; default 2)");
    args.executor_opt = cmd.add_option(
        "--executor", args.executor,
        "how subsystems run: processes (worker processes, default; see --processes) | "
        "inprocess | "
        "mpi (under mpirun: rank 0 the master, the other ranks node agents)");
    args.threads_opt =
        cmd.add_option("--threads", args.threads, "executor worker threads (0 = all cores)");
    args.pin_opt = cmd.add_option("--pin", args.pin,
                                  "placement of the worker processes: " + pin_help("none") +
                                      "; see `macrostep topology CONFIG`");
    args.hang_timeout_opt = cmd.add_option(
        "--hang-timeout", args.hang_timeout,
        "seconds a worker process may go without evaluating its model before it counts as hung "
        "and the run fails (default 60, 0 = never)");
    args.max_restarts_opt = cmd.add_option(
        "--max-restarts", args.max_restarts,
        "process executor: when a worker process dies or hangs, restart the workers from their "
        "last accepted states and repeat the step, at most N times (default 0: the run fails); "
        "the results are the same as without the failure");
    args.processes_opt = cmd.add_option(
        "--processes", args.processes,
        "process executor: worker processes N | auto (at most one per usable core) | "
        "per-subsystem (default [executor] processes, else auto); a process hosting "
        "several subsystems runs them on its threads, with the same results");
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
                     reference ? "result CSV or .h5 (default <config stem>.reference.csv, or "
                                 "[output].file with .reference before its extension)"
                               : "result CSV or .h5 (default [output].file or <config stem>.csv; "
                                 "with --monolithic .monolithic before the extension); a result "
                                 "of another kind of run is never overwritten");
  if (reference) {
    cmd.add_option("--at", args.at,
                   "write the reference at the time points of this result CSV (e.g. the macro "
                   "points of a co-simulation) instead of the output_interval grid");
  }
  cmd.add_flag("--all-states", args.all_states, "write every state, not only coupling bodies");
  cmd.add_flag("--progress", args.progress, "progress line on stderr even when not a terminal");
}

}  // namespace macrostep::app
