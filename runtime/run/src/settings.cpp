// Resolving the settings of a co-simulation run (settings.hpp); the checks that need the built
// system are in checked_system.cpp.
#include "macrostep/run/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "macrostep/control/estimators.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/model/subsystem.hpp"
#include "output_rows.hpp"

namespace macrostep::run {

using schemes::SchemeOptions;

namespace {

// The scheme, its estimator and its corrector keys together (after the overrides).
void check_scheme_combination(const config::CosimConfig& c, const CosimOptions& options) {
  const std::string scheme_source =
      options.scheme ? fmt::format("--scheme {}", config::to_string(c.scheme))
                     : fmt::format("cosim.scheme = \"{}\"", config::to_string(c.scheme));
  if (!config::estimator_fits(c.scheme, c.estimator)) {
    throw SetupError(fmt::format(
        "{} {} does not belong to {} (allowed: {}{}){}",
        options.estimator ? "--estimator" : "cosim.estimator =", control::to_string(c.estimator),
        scheme_source, model::joined_names(config::fitting_estimator_names(c.scheme)),
        c.scheme == config::CosimScheme::kGaussSeidel ? ": a fixed step size, METHODS D-10" : "",
        options.estimator ? "" : "; give --estimator with one of them"));
  }
  if (options.jacobian && (!c.iterative() || c.scheme == config::CosimScheme::kWaveform)) {
    throw SetupError(fmt::format(
        "--jacobian applies to the implicit and semi-implicit schemes; {} has no interface "
        "Jacobian",
        scheme_source));
  }
  // The file's scheme-specific keys were checked against the file's scheme; --scheme over it may
  // leave them without meaning, and a --set's are checked here only (config reader), against the
  // scheme the run has.
  if (!c.iterative() && c.corrector_keys_given) {
    throw SetupError(
        scheme_source +
        ": the configuration sets corrector keys (jacobian, tau, max_corrector_passes, "
        "perturbation_min, omega, final_pass) that the explicit scheme does not "
        "use");
  }
  if (c.scheme != config::CosimScheme::kGaussSeidel && !c.sequence.empty()) {
    throw SetupError(scheme_source + ": cosim.sequence applies only to the gauss-seidel scheme");
  }
  if (c.scheme != config::CosimScheme::kGaussSeidel && c.gauss_seidel_given) {
    throw SetupError(scheme_source +
                     ": cosim.gauss_seidel applies only to the gauss-seidel scheme");
  }
  if (c.scheme == config::CosimScheme::kGaussSeidel && c.approximation.uses_rates()) {
    throw SetupError(scheme_source +
                     fmt::format(": Gauss-Seidel takes the approximations without rates "
                                 "(lagrange, c0, c1, the b = 0 sets), not \"{}\"",
                                 c.approximation.name));
  }
  if (c.prediction_ratio_limit_given && !c.explicit_state_estimates()) {
    throw SetupError(fmt::format(
        "{} with estimator {}: cosim.prediction_ratio_limit applies only to the explicit "
        "estimators exLE and exMD (scheme explicit, or auto's explicit steps)",
        scheme_source, control::to_string(c.estimator)));
  }
  if (c.scheme != config::CosimScheme::kWaveform && c.omega_given) {
    throw SetupError(scheme_source + ": cosim.omega applies only to the waveform scheme");
  }
  if (c.final_pass_given && c.scheme != config::CosimScheme::kImplicit &&
      c.scheme != config::CosimScheme::kAuto) {
    throw SetupError(scheme_source +
                     ": cosim.final_pass applies only to the implicit scheme and auto's implicit "
                     "steps");
  }
  if (c.scheme == config::CosimScheme::kWaveform && c.jacobian_given && !options.jacobian) {
    throw SetupError(scheme_source + ": cosim.jacobian has no meaning for waveform relaxation");
  }
}

// Every approximation in effect against the scheme, estimator and order after the overrides
// (the file alone was checked when it was read).
void check_approximation_settings(const config::CosimConfig& c, const CosimOptions& options,
                                  const std::vector<std::string>& connections) {
  const std::string source =
      options.approximation ? fmt::format("--approximation {}", c.approximation.name)
                            : fmt::format("cosim.approximation = \"{}\"", c.approximation.name);
  if (const std::string problem = config::approximation_problem(c.approximation, c);
      !problem.empty()) {
    throw SetupError(source + ": " + problem);
  }
  for (std::size_t k = 0; k < connections.size(); ++k) {
    if (connections[k].empty()) continue;
    const std::string problem =
        config::approximation_problem(polynomials::parse_approximation(connections[k]), c);
    if (!problem.empty()) {
      throw SetupError(fmt::format("connection[{}].approximation: {}", k + 1, problem));
    }
  }
}

// The scheme's options from the [cosim] values in effect (METHODS §9 defaults); SetupError if the
// controller refuses them.
SchemeOptions scheme_options(const config::CosimConfig& c, double end_time) {
  SchemeOptions scheme;
  control::MacroStepOptions& m = scheme.control;
  m.t_start = model::kStartTime;
  m.t_end = end_time;
  m.estimator = c.estimator;
  const config::OrderSetting order = c.effective_order();
  if (c.fixed_step()) {
    m.mode = control::StepSizeMode::kFixed;
    m.h = *c.step_size;
    m.kappa_fixed = order.kappa;
  } else {
    m.mode = control::StepSizeMode::kVariable;
    m.h = c.step_size.value_or(config::kDefaultInitialStep);
    if (order.automatic) {
      m.order.strategy = c.order_strategy;
      m.order.kappa_max = config::kMaxCosimOrder;
    } else {
      m.order.strategy = control::OrderStrategy::kFixed;
      m.order.kappa_max = order.kappa;
    }
    m.tolerances.rtol = c.rtol;
    m.tolerances.atol_pos = c.effective_atol_pos();
    m.tolerances.atol_vel = c.effective_atol_vel();
    m.tolerances.atol_u = c.effective_atol_u();
    m.step.safety = c.safety;
    m.step.r_min = c.r_min;
    m.step.r_max = c.r_max;
    m.step.dead_zone = c.dead_zone;
    if (c.h_max) m.step.h_max = *c.h_max;
  }
  if (c.scheme == config::CosimScheme::kGaussSeidel) {
    schemes::GaussSeidelOptions gs;
    gs.sequence = c.sequence;
    gs.end_value = c.gauss_seidel == config::GaussSeidelEndValue::kSequential
                       ? schemes::GaussSeidelEndValue::kSequential
                       : schemes::GaussSeidelEndValue::kConverged;
    scheme.gauss_seidel = gs;
    // Its repetitions of a subsystem whose law reads its own outputs settle in these weights.
    m.tolerances.rtol = c.rtol;
    m.tolerances.atol_pos = c.effective_atol_pos();
    m.tolerances.atol_vel = c.effective_atol_vel();
    m.tolerances.atol_u = c.effective_atol_u();
  }
  scheme.least_squares = c.predictor == config::PredictorKind::kLeastSquares;
  scheme.least_squares_points = c.least_squares_points;
  scheme.prediction_ratio_limit = c.prediction_ratio_limit;
  if (c.iterative()) {
    corrector::CorrectorOptions o;
    o.iteration = c.scheme == config::CosimScheme::kSemiImplicit
                      ? corrector::IterationKind::kSemiImplicit
                  : c.scheme == config::CosimScheme::kWaveform ? corrector::IterationKind::kWaveform
                                                               : corrector::IterationKind::kNewton;
    o.jacobian = c.jacobian;
    o.tau = c.tau;
    o.max_passes = c.max_corrector_passes;
    o.perturbation_min = c.perturbation_min;
    o.omega = c.omega;
    o.final_pass = c.final_pass.value();  // resolve_final_pass
    scheme.corrector = o;
    scheme.adaptive = c.scheme == config::CosimScheme::kAuto;
    if (c.fixed_step()) {  // the convergence test's weights (METHODS §4.3)
      m.tolerances.rtol = c.rtol;
      m.tolerances.atol_pos = c.effective_atol_pos();
      m.tolerances.atol_vel = c.effective_atol_vel();
      m.tolerances.atol_u = c.effective_atol_u();
    }
  }
  try {
    if (scheme.corrector) scheme.corrector->validate();
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
  return scheme;
}

// The command line's numbers, each checked on its own (SetupError naming the flag).
void check_override_values(const CosimOptions& options) {
  check_stop_time(options.stop_time);
  if (options.rtol && !(*options.rtol > 0.0 && *options.rtol < 1.0)) {
    throw SetupError(fmt::format("--rtol must be in (0, 1) (got {})", *options.rtol));
  }
  if (options.step_size && !(*options.step_size > 0.0 && std::isfinite(*options.step_size))) {
    throw SetupError(fmt::format("--step-size must be > 0 (got {})", *options.step_size));
  }
  if (options.order && !options.order->automatic &&
      (options.order->kappa < 0 || options.order->kappa > config::kMaxCosimOrder)) {
    throw SetupError(fmt::format("--order must be auto or an integer 0..{} (got {})",
                                 config::kMaxCosimOrder, options.order->kappa));
  }
  if (options.min_micro_steps && (*options.min_micro_steps < 0 || *options.min_micro_steps == 1 ||
                                  *options.min_micro_steps > 1000)) {
    throw SetupError(fmt::format("--min-micro-steps must be 0 (no limit) or 2..1000 (got {})",
                                 *options.min_micro_steps));
  }
  if (options.threads && *options.threads < 0) {
    throw SetupError(fmt::format("--threads must be >= 0 (got {})", *options.threads));
  }
}

// The process executor's settings: hang and handshake timeouts, recoveries, placement.
void resolve_process_settings(const config::RunConfig& config, const CosimOptions& options,
                              CosimSettings& s) {
  if (options.hang_timeout) {
    if (!(*options.hang_timeout >= 0.0 && *options.hang_timeout <= 1e6)) {
      throw SetupError(
          fmt::format("--hang-timeout must be 0 (off) or a number of seconds up to "
                      "1e6 (got {})",
                      *options.hang_timeout));
    }
    s.hang_timeout = *options.hang_timeout;
  }
  if (options.max_restarts) {
    if (*options.max_restarts < 0 || *options.max_restarts > 1000) {
      throw SetupError(
          fmt::format("--max-restarts must be an integer 0..1000 (got {})", *options.max_restarts));
    }
    s.max_restarts = static_cast<unsigned>(*options.max_restarts);
  }
  s.handshake_timeout =
      options.handshake_timeout ? options.handshake_timeout : config.executor.handshake_timeout;
  if (options.handshake_timeout &&
      !(*options.handshake_timeout > 0.0 && *options.handshake_timeout <= 1e6)) {
    throw SetupError(
        fmt::format("--handshake-timeout must be a number of seconds in (0, 1e6] (got {})",
                    *options.handshake_timeout));
  }
  if (config.executor.processes) s.processes = *config.executor.processes;
  if (options.processes) {
    try {
      s.processes = placement::parse_process_count(*options.processes);
    } catch (const std::invalid_argument& e) {
      throw SetupError(std::string("--processes ") + e.what());
    }
  }
  try {
    s.pin = placement::parse_pin(options.pin);
    // A listed PU must exist and be usable (the same check as `macrostep topology --pin`), and a
    // map needs one entry per process; before anything starts.
    if (options.pin != "none") {
      placement::plan_placement(placement::Topology::detect(), s.pin,
                                config::subsystem_count(config), 1);
    }
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
}

// Flags that only the process executor, or only some schemes, can honour.
void check_executor_combination(const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  if (s.master_hosts_first && c.executor != config::ExecutorKind::kProcesses) {
    throw SetupError(
        "--master-hosts-first applies to the process executor (--executor processes); the "
        "in-process executor runs every subsystem in the master anyway");
  }
  if (s.max_restarts > 0 && c.executor != config::ExecutorKind::kProcesses) {
    throw SetupError(
        "--max-restarts applies to the process executor (--executor processes): a subsystem "
        "in the master's own process cannot crash alone");
  }
}

// What a checkpoint of a run with these settings would not carry (its scheme could not continue
// bit-identically from it), as "jump_handling = ... (why); what to use"; empty: nothing.
std::string checkpoint_obstacle(const config::RunConfig& config, const config::CosimConfig& c) {
  if (config.solver.micro_step_stop == config::MicroStepStop::kOvershoot) {
    return "[solver] micro_step_stop = \"overshoot\" (the state at a macro point is interpolated "
           "and has no workspace to export)";
  }
  if (c.iterative() && c.scheme != config::CosimScheme::kWaveform &&
      !corrector::jacobian_traits(c.jacobian).checkpoint) {
    return fmt::format(
        "jacobian = \"{}\" (a checkpoint does not carry what it keeps across steps, such as a "
        "secant history); use {}",
        c.jacobian,
        corrector::JacobianRegistry::instance().names_where(
            [](const corrector::JacobianTraits& t) { return t.checkpoint; }));
  }
  return {};
}

// Checkpoints (and resuming one) export and import every subsystem's workspace, which needs the
// snapshots (rollback) even where the scheme does not; the numbers are the same either way
// (contract 2). What an export does not carry is refused.
void check_checkpoint_settings(const config::RunConfig& config, const CosimOptions& options,
                               CosimSettings& s) {
  const config::OutputConfig& o = config.output;
  s.checkpoint_every = options.checkpoint_every;
  if (!s.checkpoint_every && !o.checkpoint_every.empty()) {
    try {
      s.checkpoint_every = checkpoint::parse_interval(o.checkpoint_every, "checkpoint_every");
    } catch (const std::invalid_argument& e) {
      throw SetupError(fmt::format(
          "{}: output.{}",
          config::origin(config, o.checkpoint_every_line, "output.checkpoint_every"), e.what()));
    }
  }
  s.checkpoint_path = !options.checkpoint_path.empty() ? options.checkpoint_path : o.checkpoint;
  if (!s.checkpoint_every && options.resume == nullptr) {
    s.no_final_checkpoint = checkpoint_obstacle(config, s.cosim);
    if (!s.checkpoint_path.empty()) {
      throw SetupError(
          options.checkpoint_path.empty()
              ? fmt::format("{}: output.checkpoint: names the file of checkpoint_every; give "
                            "output.checkpoint_every (or --checkpoint-every) too",
                            config::origin(config, o.checkpoint_line, "output.checkpoint"))
              : std::string("--checkpoint names the checkpoint file of --checkpoint-every; give "
                            "both (or output.checkpoint_every)"));
    }
    return;
  }
  const char* flag = options.resume != nullptr  ? "resume"
                     : options.checkpoint_every ? "--checkpoint-every"
                                                : "output.checkpoint_every";
  if (const std::string obstacle = checkpoint_obstacle(config, s.cosim); !obstacle.empty()) {
    throw SetupError(fmt::format("{} does not work with {}", flag, obstacle));
  }
  s.executor.rollback = true;
}

// The jump handling neither the file nor the command line gave (methods.md §2.2): the history
// shifted and at least two micro steps per macro step, where the co-simulation's error stays
// within 1.25× the error of the same scheme with exactly integrated subsystems
// (docs/results/2026-11-27-jump-policy.md); with micro_step_stop = "overshoot", which needs
// them, the history kept and no floor.
void resolve_jump_defaults(const config::RunConfig& config, config::CosimConfig& c) {
  const bool overshoot = config.solver.micro_step_stop == config::MicroStepStop::kOvershoot;
  const runner::JumpOptions defaults = overshoot ? kOvershootJumps : kDefaultJumps;
  if (!c.jump_handling) c.jump_handling = defaults.policy;
  if (!c.min_micro_steps) c.min_micro_steps = defaults.micro_steps;
}

// D-50: the pass after convergence is left out by default where the Jacobian strategy is exact
// (fd: Newton contracts at once, the iterate that passes the test is converged; 0.67–0.77 of the
// wall time at the same NRMSE, docs/results/2026-12-02-final-pass.md) and kept with the others
// (heun on a joint: the constraint drift rose from 1e-11 to 5.5e-10 without it).
void resolve_final_pass(config::CosimConfig& c) {
  if (!c.final_pass) c.final_pass = !corrector::jacobian_traits(c.jacobian).exact;
}

// [solver] micro_step_stop = "overshoot" (METHODS §6.6 option (a), D-36): only where no step is
// repeated and nothing restarts or restores a workspace, since the state at T_{N+1} is
// interpolated while IDA stands beyond it (checkpoints are refused by checkpoint_obstacle).
void check_micro_step_stop(const config::RunConfig& config, const CosimSettings& s) {
  if (config.solver.micro_step_stop != config::MicroStepStop::kOvershoot) return;
  const config::CosimConfig& c = s.cosim;
  std::string conflict;
  if (!c.fixed_step() || c.scheme != config::CosimScheme::kExplicit)
    conflict = "a fixed-H explicit co-simulation (estimator none, scheme explicit)";
  else if (c.jump_handling != kOvershootJumps.policy)
    conflict = "jump_handling = \"keep\"";
  else if (s.executor.rollback)
    conflict = "no workspace snapshots (no --max-restarts)";
  if (!conflict.empty()) {
    throw SetupError(fmt::format(
        "{}: solver.micro_step_stop: \"overshoot\" (step past T_(N+1) and interpolate) "
        "needs {} (METHODS D-36)",
        config::origin(config, config.solver.micro_step_stop_line, "solver.micro_step_stop"),
        conflict));
  }
}

// A fixed macro step: it needs a size, a fixed degree, no controller tolerance, and a bounded
// number of rows; a controlled one a first step within h_max.
void check_step_settings(const config::RunConfig& config, const config::CosimConfig& c,
                         const CosimOptions& options, double end_time) {
  const std::string estimator_source =
      options.estimator ? "--estimator none" : "cosim.estimator = \"none\"";
  if (c.fixed_step()) {
    // The controller keys of --set edits on a file without estimator (the file's own keys were
    // checked when it was read).
    for (const std::string& key : c.controller_keys_set) {
      if (c.uses_at_fixed_step(key)) continue;
      throw config::error_at(config, 0, "cosim." + key,
                             config::controller_key_without_estimator(estimator_source));
    }
    if (!c.step_size) {
      throw SetupError(estimator_source +
                       " needs a fixed macro-step size: give --step-size H (or cosim.step_size)");
    }
    if (c.order && c.order->automatic) {
      throw SetupError(fmt::format(
          "{} with {}: order control needs an error estimator; give a fixed degree --order K "
          "(0..{})",
          estimator_source, options.order ? "--order auto" : "cosim.order = \"auto\"",
          config::kMaxCosimOrder));
    }
    if (options.rtol && !c.iterative() && c.scheme != config::CosimScheme::kGaussSeidel) {
      throw SetupError(
          "--rtol sets the macro-step controller's tolerance, and " + estimator_source +
          " (a fixed step) has no controller; the subsystem tolerance is [solver] rtol");
    }
  }
  if (c.fixed_step()) {
    const double rows = end_time / (*c.step_size * c.output_every);
    if (rows > config::kMaxOutputRows) {
      throw SetupError(fmt::format(
          "a fixed step of {} s over {} s with output_every = {} gives {:.3g} rows (at most "
          "{:.3g}); raise cosim.output_every",
          *c.step_size, end_time, c.output_every, rows, config::kMaxOutputRows));
    }
  } else if (c.h_max && c.step_size && *c.step_size > *c.h_max) {
    throw SetupError(
        fmt::format("--step-size {} exceeds cosim.h_max = {}", *c.step_size, *c.h_max));
  }
}

// Per subsystem its IDA settings where a [[subsystem]] gives solver keys of its own; empty when
// none does (every subsystem then runs with [solver]'s, the code path of every other file).
std::vector<ida::IntegratorOptions> subsystem_solvers(const config::RunConfig& config) {
  const auto& overrides = config.subsystem_solvers;
  if (std::all_of(overrides.begin(), overrides.end(), [](const auto& o) { return o.empty(); })) {
    return {};
  }
  std::vector<ida::IntegratorOptions> solvers;
  for (const auto& o : overrides) {
    solvers.push_back(integrator_options(config::with_override(config.solver, o)));
  }
  return solvers;
}

}  // namespace

std::string order_text(const config::OrderSetting& o) {
  return o.automatic ? std::string("auto") : std::to_string(o.kappa);
}

CosimSettings resolve_cosim(const config::RunConfig& config, const CosimOptions& options) {
  config::check_cosimulation(config);
  CosimSettings s;
  config::CosimConfig& c = s.cosim;
  c = config.cosim;

  check_override_values(options);
  resolve_process_settings(config, options, s);
  if (options.scheme) c.scheme = *options.scheme;
  if (options.estimator) {
    c.estimator = *options.estimator;
    c.estimator_given = true;
  } else if (!c.estimator_given) {
    c.estimator = config::default_estimator(c.scheme);  // D-48
  }
  if (options.jacobian) c.jacobian = *options.jacobian;
  if (options.order) c.order = *options.order;
  if (options.approximation) c.approximation = *options.approximation;
  if (!options.approximation) {
    for (const auto& connection : config.system_description->connections)
      s.connection_approximations.push_back(connection.approximation);
  }
  if (options.jump_handling) c.jump_handling = *options.jump_handling;
  if (options.min_micro_steps) c.min_micro_steps = *options.min_micro_steps;
  resolve_jump_defaults(config, c);
  if (options.step_size) c.step_size = *options.step_size;
  if (options.threads) c.threads = *options.threads;
  if (options.executor) {
    c.executor = *options.executor;
    c.executor_given = true;
  }
  s.master_hosts_first = options.master_hosts_first;
  if (!options.worker_executable.empty()) s.worker_executable = options.worker_executable;
  s.mpi = options.mpi;
  if (c.executor == config::ExecutorKind::kMpi && !s.mpi) {
    throw SetupError(
        "--executor mpi runs under mpirun in a macrostep built with the MPI bridge "
        "(mpirun -np R macrostep run CONFIG --executor mpi)");
  }
  // Default: a process per subsystem whenever there is more than one subsystem; the
  // results are bit-identical to in-process (tests/executors).
  if (!c.executor_given) {
    c.executor = config::subsystem_count(config) > 1 ? config::ExecutorKind::kProcesses
                                                     : config::ExecutorKind::kInProcess;
  }
  if (options.rtol) c.rtol = *options.rtol;  // the atols that were not given follow it
  resolve_final_pass(c);

  // ---- combinations (the file alone was checked when it was read) ----
  check_scheme_combination(c, options);
  check_executor_combination(s);
  s.end_time = options.stop_time.value_or(config.simulation.end_time);
  check_step_settings(config, c, options, s.end_time);
  if (c.predictor == config::PredictorKind::kLeastSquares &&
      c.least_squares_points <= c.highest_order() + 1) {
    throw SetupError(fmt::format(
        "--order {} needs cosim.least_squares_points > {} for the least-squares predictor (got "
        "{})",
        order_text(c.effective_order()), c.highest_order() + 1, c.least_squares_points));
  }
  check_approximation_settings(c, options, s.connection_approximations);
  s.scheme = scheme_options(c, s.end_time);

  s.executor.solver = integrator_options(config.solver);
  s.executor.subsystem_solvers = subsystem_solvers(config);
  // Crash recovery restores the workers' accepted states: it needs the snapshots even where the
  // scheme does not (the numbers are the same either way, contract 2).
  s.executor.rollback = needs_rollback(s.scheme) || s.max_restarts > 0;
  s.executor.threads = c.threads;
  s.executor.jumps = {*c.jump_handling, *c.min_micro_steps};
  s.all_states = options.all_states || config.output.all_states;
  resolve_output_rows(config, s);
  check_checkpoint_settings(config, options, s);
  check_micro_step_stop(config, s);
  return s;
}

double handshake_timeout_for(std::size_t largest_subsystem_states) {
  return 10.0 + 1e-4 * static_cast<double>(largest_subsystem_states);
}

}  // namespace macrostep::run
