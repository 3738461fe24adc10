// The macro-step pipeline (pipeline.hpp; METHODS.md §3.1, §6.4; seed 000 §3, §4.4).
#include "macrostep/schemes/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>

#include "macrostep/control/estimators.hpp"
#include "macrostep/control/step_size.hpp"
#include "macrostep/model/clock.hpp"
#include "macrostep/model/names.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "time_events.hpp"

namespace macrostep::schemes {

namespace {

using model::now_ns;

}  // namespace

void initial_outputs(const system::CoupledSystem& system, std::span<const double> u0,
                     std::vector<std::vector<double>>& outputs) {
  outputs.resize(system.subsystem_count());
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto& s = system.subsystem(i);
    std::vector<double> z(s.state_size()), zp(s.state_size()), u(s.input_size());
    system.gather_inputs(i, u0, u);
    s.initial_state(u, z, zp);
    outputs[i].resize(s.output_size());
    s.outputs(s.initial_time(), z, u, outputs[i]);
  }
}

const char* to_string(StepKind kind) {
  return model::name_of(kStepKindNames, kind);
}

double SchemeResult::mean_h() const {
  return steps.accepted > 0 ? end_time / static_cast<double>(steps.accepted) : 0.0;
}

void MacroStepScheme::import_state(const std::vector<std::vector<double>>& state) {
  if (!state.empty()) {
    throw std::invalid_argument(
        fmt::format("scheme state of {} arrays for a scheme that keeps none", state.size()));
  }
}

bool needs_rollback(const SchemeOptions& options) {
  return options.control.mode == control::StepSizeMode::kVariable ||
         control::comparison_runs(options.control.estimator) > 0 || options.corrector.has_value() ||
         options.gauss_seidel.has_value();
}

void predict(const SchemeOptions& options, const polynomials::CouplingHistory& history, int kappa,
             double t_next, std::span<double> u_pre) {
  if (options.least_squares && static_cast<int>(history.size()) >= options.least_squares_points &&
      options.least_squares_points > kappa + 1) {
    polynomials::least_squares_prediction(history, kappa, options.least_squares_points, t_next,
                                          u_pre);
  } else {
    polynomials::lagrange_prediction(history, kappa, t_next, u_pre);
  }
}

PassRunner::PassRunner(executors::Executor& executor, SchemeResult& result,
                       const system::CoupledSystem& system)
    : executor_(executor),
      result_(result),
      outputs_(system.subsystem_count()),
      attempt_solver_ns_(system.subsystem_count(), 0),
      attempt_extra_ns_(system.subsystem_count(), 0),
      attempt_extra_runs_(system.subsystem_count(), 0) {
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    work_weights_.push_back(
        static_cast<double>(std::max<std::size_t>(1, system.subsystem(i).state_size())));
  }
}

void PassRunner::begin_attempt() {
  executor_ns_ = 0;
  attempt_work_ = 0.0;
  std::fill(attempt_solver_ns_.begin(), attempt_solver_ns_.end(), 0);
  std::fill(attempt_extra_ns_.begin(), attempt_extra_ns_.end(), 0);
  std::fill(attempt_extra_runs_.begin(), attempt_extra_runs_.end(), 0);
}

const executors::PassOutcome& PassRunner::pass(
    double t_end, std::span<const executors::SubsystemCommand> commands) {
  const auto t0 = now_ns();
  executor_.step(t_end, commands, outcome_);
  const auto ns = now_ns() - t0;
  executor_ns_ += ns;
  TimeBreakdown& time = result_.time;
  time.executor_ns += ns;
  time.communication_ns += outcome_.communication_ns;
  std::int64_t slowest = 0;
  result_.integrations.nominal += outcome_.subsystems.size();
  for (std::size_t i = 0; i < outcome_.subsystems.size(); ++i) {
    const auto& so = outcome_.subsystems[i];
    result_.integrations.extra += so.extra.size();
    result_.subsystem_solver_ns[i] += static_cast<double>(so.solver_ns);
    attempt_solver_ns_[i] += so.solver_ns;
    slowest = std::max(slowest, so.solver_ns);
    time.extra_runs_ns += so.extra_ns;
    const auto calls = [](const ida::AdvanceStats& s) {
      return static_cast<double>(s.residual_evals + s.jacobian_evals + s.linear_setups);
    };
    double subsystem_calls = calls(so.nominal.stats);
    for (const auto& extra : so.extra) subsystem_calls += calls(extra.stats);
    attempt_work_ += work_weights_[i] * subsystem_calls;
    attempt_extra_ns_[i] += so.extra_ns;  // Σ of the extra runs' wall_ns (work)
    attempt_extra_runs_[i] += static_cast<std::int64_t>(so.extra.size());
  }
  time.idle_ns += slowest;  // Σ max_L T_{L,N} over passes; the solver part is removed at the end
  return outcome_;
}

const executors::EvaluationOutcome& PassRunner::evaluate_outputs(
    std::span<const std::vector<double>> inputs, runner::EventSide side) {
  const auto t0 = now_ns();
  executor_.evaluate_outputs(inputs, evaluation_, side);
  const auto ns = now_ns() - t0;
  executor_ns_ += ns;
  result_.time.executor_ns += ns;
  ConsistentUpdateStatistics& stats = result_.consistent_update;
  ++stats.output_evaluations;
  for (const auto& in : inputs) stats.subsystem_evaluations += in.empty() ? 0 : 1;
  return evaluation_;
}

const executors::EvaluationOutcome* PassRunner::evaluate_outputs_into(
    std::span<const std::vector<double>> inputs, std::span<std::vector<double>> y,
    std::span<std::vector<double>> d, runner::EventSide side) {
  const executors::EvaluationOutcome& e = evaluate_outputs(inputs, side);
  if (!e.ok) return &e;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) continue;
    y[i] = e.subsystems[i].outputs;
    d[i] = e.subsystems[i].feedthrough;
  }
  return nullptr;
}

namespace {

// A model that returns NaN or an infinity (DESIGN.md contract 5): the attempt counts as a
// failure of that subsystem, naming the output and the time, so that the step is rejected with
// a smaller H and, if it persists, the run ends with that message (D-26).
void fail_on_non_finite_outputs(const system::CoupledSystem& system,
                                const std::vector<std::vector<double>>& outputs, double t_end,
                                AttemptResult& a) {
  for (std::size_t i = 0; i < outputs.size() && i < system.subsystem_count(); ++i) {
    for (std::size_t o = 0; o < outputs[i].size(); ++o) {
      if (std::isfinite(outputs[i][o])) continue;
      a.subsystem_failed = true;
      a.failed_subsystem = i;
      a.error =
          fmt::format("its output {} is {} at t = {:.9g}",
                      model::quoted(system.subsystem(i).output_name(o)), outputs[i][o], t_end);
      return;
    }
  }
}

// Statistics and the time breakdown up to the last attempt, also when the run stops with an
// exception (a failed run's metadata still reports them).
void finalize(const control::MacroStepController& ctl, executors::Executor& executor,
              std::int64_t t_run0, double reached, SchemeResult& result) {
  result.steps = ctl.statistics();
  result.end_time = reached;
  double solver = 0.0;
  std::int64_t snapshot = 0;
  result.subsystem_stats.clear();
  for (std::size_t i = 0; i < executor.subsystem_count(); ++i) {
    solver = std::max(solver, result.subsystem_solver_ns[i]);
    snapshot = std::max(snapshot, executor.snapshot_ns(i));
    result.subsystem_stats.push_back(executor.total_stats(i));
  }
  result.time.solver_ns = static_cast<std::int64_t>(solver);
  result.time.idle_ns -= result.time.solver_ns;  // Eq. 4.5
  result.time.snapshot_ns = snapshot;
  result.time.total_ns = now_ns() - t_run0;
}

// The steps file's error_estimate of an attempt: the norm the local error test compared with 1,
// NaN where there is none (no estimator, or the attempt failed before its estimate).
double recorded_error_norm(const AttemptResult& a) {
  if (a.subsystem_failed || a.corrector_failed ||
      a.estimate.kind == control::ErrorEstimate::Kind::kNone) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return a.estimate.norm();
}

// A new controller at t_start, or the one a continuation exported.
control::MacroStepController start_controller(const control::MacroStepOptions& options,
                                              std::span<const double> u0,
                                              const Continuation& continuation) {
  if (continuation.controller_state == nullptr) return control::MacroStepController(options, u0);
  try {
    return control::MacroStepController::import_state(options, *continuation.controller_state,
                                                      u0.size());
  } catch (const std::exception& e) {
    throw ContinuationMismatch(fmt::format("the controller state does not fit: {}", e.what()));
  }
}

// The preconditions of run_scheme (std::invalid_argument).
void check_run_arguments(const system::CoupledSystem& system, const executors::Executor& executor,
                         const SchemeOptions& options) {
  if (system.subsystem_count() < 2 || system.coupling_count() == 0) {
    throw std::invalid_argument("co-simulation needs at least two coupled subsystems");
  }
  if (executor.subsystem_count() != system.subsystem_count()) {
    throw std::invalid_argument("executor and system have different subsystem counts");
  }
  if (options.least_squares && options.least_squares_points < 2) {
    throw std::invalid_argument("least-squares predictor needs at least 2 points");
  }
}

// The controller's options: the history also holds the least-squares predictor's points.
control::MacroStepOptions controller_options(const SchemeOptions& options) {
  control::MacroStepOptions copts = options.control;
  if (options.least_squares) {
    copts.history_capacity =
        std::max(copts.history_capacity, static_cast<std::size_t>(options.least_squares_points));
  }
  return copts;
}

// The scheme's own state from a continuation, if it has one.
void import_scheme_state(MacroStepScheme& scheme, const Continuation& continuation) {
  try {
    if (continuation.scheme_state != nullptr) scheme.import_state(*continuation.scheme_state);
  } catch (const std::exception& e) {
    throw ContinuationMismatch(fmt::format("the scheme state does not fit: {}", e.what()));
  }
}

// The stateful laws' accepted state from a continuation, if it has one (CouplingLaw "Accepted
// state").
void import_law_states(const system::CoupledSystem& system, const Continuation& continuation) {
  if (continuation.law_states == nullptr) return;
  try {
    system.import_law_states(*continuation.law_states);
  } catch (const std::exception& e) {
    throw ContinuationMismatch(fmt::format("the coupling laws' state does not fit: {}", e.what()));
  }
}

// Adds an iterative attempt's corrector passes, Jacobians and residual to the statistics.
void count_corrector(const AttemptResult& a, CorrectorStatistics& c) {
  if (!a.iterative) return;
  ++c.attempts;
  c.passes += static_cast<std::uint64_t>(a.corrector_passes);
  c.max_passes = std::max(c.max_passes, static_cast<std::uint64_t>(a.corrector_passes));
  c.jacobian_evaluations += static_cast<std::uint64_t>(a.jacobian_evaluations);
  c.max_iteration_residual = std::max(c.max_iteration_residual, a.iteration_residual);
}

// Adds an explicit attempt's raised estimate (SchemeOptions::prediction_ratio_limit).
void count_raise(const AttemptResult& a, EstimateRaises& r) {
  if (std::isnan(a.estimate_raise)) return;
  r.checked = true;
  if (!(a.estimate_raise > 1.0)) return;
  ++r.attempts;
  r.max_factor = std::max(r.max_factor, a.estimate_raise);
}

// The accept/reject loop of one run (run_scheme): the state it keeps between attempts and the
// observers it reports to. One object per run; not thread-safe.
class AttemptLoop {
 public:
  AttemptLoop(const system::CoupledSystem& system, executors::Executor& executor,
              MacroStepScheme& scheme, const SchemeOptions& options,
              const AcceptedObserver& on_accepted, const ProgressObserver& on_progress,
              const Continuation& continuation, control::MacroStepController& ctl,
              PassRunner& runner, SchemeResult& result)
      : system_(system),
        executor_(executor),
        scheme_(scheme),
        options_(options),
        on_accepted_(on_accepted),
        on_progress_(on_progress),
        continuation_(continuation),
        ctl_(ctl),
        runner_(runner),
        result_(result),
        attempts_(continuation.attempts),
        aligns_events_(aligns_time_events(system)) {
    // A continuation's controller holds its event limit already.
    if (aligns_events_ && continuation.controller_state == nullptr && !ctl_.finished()) {
      ctl_.set_event_limit(initial_time_event(system));
    }
  }

  // Attempts until the controller has reached t_end. Throws what run_scheme documents; a
  // step-size underflow caused by a failing subsystem is reported as that subsystem's failure.
  void run() {
    try {
      while (!ctl_.finished()) attempt();
    } catch (const control::StepSizeUnderflow&) {
      if (consecutive_failures_ > 0 && last_failure_) std::rethrow_exception(last_failure_);
      throw;
    }
  }

 private:
  void attempt() {
    const control::StepPlan plan = ctl_.plan();
    const auto t_attempt = now_ns();
    runner_.begin_attempt();
    AttemptResult a = scheme_.attempt(plan, ctl_.history(), runner_);
    if (!a.subsystem_failed) {
      fail_on_non_finite_outputs(system_, runner_.outputs(), plan.t_end, a);
    }
    count_corrector(a, result_.corrector);
    count_raise(a, result_.estimate_raises);
    if (a.unseen_miss && result_.estimate_raises.unseen++ == 0) {
      result_.estimate_raises.first_unseen = plan.t_begin;
    }
    if (a.subsystem_failed && a.model_terminated) {
      throw ModelTerminatedRun(fmt::format("subsystem {}: {}", a.failed_subsystem + 1, a.error),
                               a.failed_subsystem, plan.t_begin);
    }
    if (a.subsystem_failed) {
      failed(plan, a,
             std::make_exception_ptr(SubsystemFailure(
                 fmt::format("subsystem {} failed in the macro step [{:.9g}, {:.9g}]: {}",
                             a.failed_subsystem + 1, plan.t_begin, plan.t_end, a.error),
                 a.failed_subsystem, plan.t_begin)),
             t_attempt);
    } else if (auto bad = non_finite_coupling(plan, a)) {
      failed(plan, a, std::make_exception_ptr(CouplingFailure(*bad, plan.t_begin)), t_attempt);
    } else {
      concluded(plan, a, t_attempt);
    }
    if (continuation_.between_steps) continuation_.between_steps(ctl_, scheme_);
  }

  // What a finished attempt's coupling variables fail on: one that is NaN or infinite (a law
  // that cannot evaluate the subsystems' outputs at T_{N+1}, such as a pressure pushed below
  // zero by too large a step), named with its value; nullopt when all are finite. A failed or
  // unconverged attempt has no new coupling variables to check.
  std::optional<std::string> non_finite_coupling(const control::StepPlan& plan,
                                                 const AttemptResult& a) const {
    if (a.corrector_failed) return std::nullopt;
    const std::vector<double>& u = runner_.u_next();
    for (std::size_t k = 0; k < u.size(); ++k) {
      if (std::isfinite(u[k])) continue;
      return fmt::format(
          "coupling variable {} is {} at the end of the macro step [{:.9g}, {:.9g}]: its law "
          "could not evaluate the subsystems' outputs there",
          model::quoted(system_.coupling_name(k)), u[k], plan.t_begin, plan.t_end);
    }
    return std::nullopt;
  }

  // A subsystem or a coupling law failed in the attempt (`failure`, the error the run ends with
  // if it persists): a rejection with r = 0.25 (D-26), counted apart, unless H is fixed or too
  // many failed in a row.
  void failed(const control::StepPlan& plan, const AttemptResult& a, std::exception_ptr failure,
              std::int64_t t_attempt) {
    result_.time.interface_ns += now_ns() - t_attempt - runner_.executor_ns();
    last_failure_ = std::move(failure);
    if (options_.control.mode == control::StepSizeMode::kFixed ||
        ++consecutive_failures_ > options_.max_consecutive_failures) {
      std::rethrow_exception(last_failure_);
    }
    executor_.reject();
    const auto t_done = now_ns();
    control::StepOutcome so;
    so.subsystem_failed = true;
    ctl_.complete(so);
    scheme_.concluded(false);
    resume_if_asked();
    report(plan, a, false, t_attempt, t_done);
  }

  // The controller's verdict on a finished attempt, and what follows from it.
  void concluded(const control::StepPlan& plan, const AttemptResult& a, std::int64_t t_attempt) {
    control::StepOutcome so;
    so.estimate = a.estimate;
    so.estimator = a.estimator;
    so.corrector_failed = a.corrector_failed;
    so.u_next = runner_.u_next();
    const control::StepVerdict verdict = ctl_.complete(so);
    result_.time.interface_ns += now_ns() - t_attempt - runner_.executor_ns();
    scheme_.concluded(verdict.accepted);
    resume_if_asked();
    std::int64_t t_done = 0;
    if (verdict.accepted) {
      consecutive_failures_ = 0;
      // An event at the step's end (planned there, or one that fell there): the values after
      // it, before accept() (which ends the evaluations of the step's end state).
      const bool event = event_at_end(runner_.last_pass());
      if (event) {
        const std::string error = values_after_event(system_, runner_, options_.control.tolerances,
                                                     outputs_after_, u_after_);
        if (!error.empty()) {
          throw CouplingFailure(fmt::format("after the event at t = {:.9g}: {}", plan.t_end, error),
                                plan.t_begin);
        }
      }
      executor_.accept();
      t_done = now_ns();
      if (event && !ctl_.finished()) {
        ctl_.jump_at_event(u_after_, plan.h_before_event);
        scheme_.at_event(outputs_after_);
      }
      if (aligns_events_ && !ctl_.finished()) {
        ctl_.set_event_limit(next_time_event(runner_.last_pass()));
      }
      // The attempt's row first: an accepted-point observer may end the run (a guard throws),
      // and the steps file must still list the attempt that was accepted.
      report(plan, a, true, t_attempt, t_done);
      // The point's outputs and coupling variables are those after an event there (a grid row at
      // an event has the values after it too).
      const auto& outputs = event ? outputs_after_ : runner_.outputs();
      const auto& u = event ? u_after_ : runner_.u_next();
      on_accepted_(AcceptedPoint{ctl_.statistics().accepted, plan.t_end, plan.kappa, plan.h(),
                                 outputs, u, plan.t_begin, runner_.last_pass().subsystems});
      result_.time.observer_ns += now_ns() - t_done;
      // After the observers: samples inside the step were evaluated with the state the attempt
      // used (T_N's); from here on the laws stand at T_{N+1}.
      system_.accept_couplings(outputs, u);
    } else {
      executor_.reject();
      t_done = now_ns();
      report(plan, a, false, t_attempt, t_done);
    }
  }

  // The scheme's resumed step size and degree, if it asks for them (MacroStepScheme::
  // resumed_step), replace the controller's next plan: before the observers and checkpoints, so
  // that a checkpoint holds the plan that runs.
  void resume_if_asked() {
    if (ctl_.finished()) return;
    if (const auto r = scheme_.resumed_step()) ctl_.resume_step(r->h, r->kappa);
  }

  // The attempt's diagnostics once the executor has taken the verdict, to the progress observer.
  void report(const control::StepPlan& plan, const AttemptResult& a, bool accepted,
              std::int64_t t_attempt, std::int64_t t_done) {
    if (!on_progress_) return;
    StepRecord r;
    r.attempt = ++attempts_;
    r.plan = plan;
    r.accepted = accepted;
    r.error_estimate = recorded_error_norm(a);
    r.corrector_passes = a.corrector_passes;
    r.iterative = a.iterative;
    r.semi_implicit = a.semi_implicit;
    r.coupling_mismatch = a.escalated_mismatch > 0.0 ? a.escalated_mismatch
                          : a.semi_implicit          ? a.iteration_residual
                                                     : 0.0;
    r.wall_ns = t_done - t_attempt;
    r.solver_ns = runner_.attempt_solver_ns();
    r.extra_runs = runner_.attempt_extra_runs();
    r.extra_ns = runner_.attempt_extra_ns();
    r.executor_ns = runner_.executor_ns();
    const auto t_obs = now_ns();
    on_progress_(r);  // writes the steps table: output time (seed 000 Eq. 4.5)
    result_.time.observer_ns += now_ns() - t_obs;
  }

  const system::CoupledSystem& system_;
  executors::Executor& executor_;
  MacroStepScheme& scheme_;
  const SchemeOptions& options_;
  const AcceptedObserver& on_accepted_;
  const ProgressObserver& on_progress_;
  const Continuation& continuation_;
  control::MacroStepController& ctl_;
  PassRunner& runner_;
  SchemeResult& result_;
  int consecutive_failures_ = 0;
  std::uint64_t attempts_;
  std::exception_ptr last_failure_;  // reported instead of an underflow it caused
  const bool aligns_events_;         // macro points on time events (time_events.hpp)
  // An accepted step's values after the event at its end (values_after_event).
  std::vector<std::vector<double>> outputs_after_;
  std::vector<double> u_after_;
};

}  // namespace

void run_scheme(const system::CoupledSystem& system, executors::Executor& executor,
                MacroStepScheme& scheme, const SchemeOptions& options,
                const AcceptedObserver& on_accepted, const ProgressObserver& on_progress,
                SchemeResult& result, const Continuation& continuation) {
  check_run_arguments(system, executor, options);
  scheme.start(system, options);
  const std::size_t ns = system.subsystem_count();
  const auto t_run0 = now_ns();
  system.reset_law_states();  // u0 and the first step from t0's law state
  const std::vector<double> u0 = system.initial_couplings();
  control::MacroStepController ctl =
      start_controller(controller_options(options), u0, continuation);
  import_scheme_state(scheme, continuation);
  import_law_states(system, continuation);

  result = SchemeResult{};
  result.subsystem_solver_ns.assign(ns, 0.0);
  // Statistics and the time breakdown up to the last attempt, also when the run stops with an
  // exception (a failed run's metadata still reports them).
  PassRunner runner(executor, result, system);
  try {
    if (continuation.controller_state == nullptr) {
      std::vector<std::vector<double>> outputs;
      initial_outputs(system, u0, outputs);
      system.start_couplings(outputs, u0);
      const auto t0 = now_ns();
      on_accepted(AcceptedPoint{
          0, options.control.t_start, 0, 0.0, outputs, u0, options.control.t_start, {}});
      result.time.observer_ns += now_ns() - t0;
    }
    AttemptLoop(system, executor, scheme, options, on_accepted, on_progress, continuation, ctl,
                runner, result)
        .run();
  } catch (...) {
    finalize(ctl, executor, t_run0, ctl.history().newest_time(), result);
    scheme.add_statistics(result);
    throw;
  }
  finalize(ctl, executor, t_run0, options.control.t_end, result);
  scheme.add_statistics(result);
}

}  // namespace macrostep::schemes
