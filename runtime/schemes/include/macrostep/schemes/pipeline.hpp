// The macro-step pipeline every co-simulation scheme runs (METHODS.md §3.1, §6.4; seed 000 §3):
//
//   plan (κ, T_{N+1}: control::MacroStepController)
//   → attempt (the scheme: predictor, commands, one or more executor passes from T_N,
//              u_{N+1} from the coupling laws, the error estimate)
//   → verdict (controller: error test, next κ and H) → executor accept() or reject()
//   → observers (accepted points, progress)
//
// The pipeline owns what every scheme shares: the controller and its history, the handling of a
// subsystem that fails (reject with r = 0.25, D-26, counted apart from corrector failures; stop
// after SchemeOptions::max_consecutive_failures, or at once in fixed mode), the time breakdown
// of seed 000 Eq. 4.5 and the observers. A scheme (MacroStepScheme) supplies only the attempt.
// The run driver (files, JSON, progress line, error mapping: cosimulation.hpp) stays outside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/corrector/corrector_options.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::schemes {

// Gauss–Seidel's end value at T_{N+1} of an input whose coupling law also reads the subsystem
// that takes it (force/force: the spring between both bodies; gauss_seidel.hpp):
//  - kConverged: the subsystem is repeated with the law evaluated at its previous result until
//    the value settles (tolerance, max_passes): the fixed point, where the law holds at T_{N+1};
//  - kSequential: the law evaluated once, with the earlier subsystems' new outputs and the
//    subsystem's own outputs extrapolated to T_{N+1} (Lagrange of degree κ through its accepted
//    outputs at T_{N−κ} … T_N); every subsystem runs once (seed 000 App. C).
// Laws that read only subsystems that ran before (force/displacement) give the same run with both.
enum class GaussSeidelEndValue { kConverged, kSequential };

// Gauss–Seidel (gauss_seidel.hpp; METHODS §3.2).
struct GaussSeidelOptions {
  // The order in which the subsystems run: a permutation of 0..n_s−1; empty: 0, 1, …, n_s−1.
  std::vector<std::size_t> sequence;
  GaussSeidelEndValue end_value = GaussSeidelEndValue::kConverged;
  // kConverged: a subsystem whose input law reads its own outputs is repeated until the change
  // that remains in every such end value is at most tolerance times its weight (the
  // coupling-variable weights of control.tolerances, the absolute part capped by the variable's
  // magnitude: gauss_seidel.hpp), at most max_passes times.
  double tolerance = 1e-3;
  int max_passes = 50;
};

struct SchemeOptions {
  control::MacroStepOptions control;  // mode, t_start/t_end, H, κ, estimator, tolerances
  bool least_squares = false;         // least-squares predictor (METHODS §2.3)
  int least_squares_points = 8;       // N_sp > κ+1
  // The approximation of each coupling variable on a step (METHODS §2.4, §2.5), indexed like u;
  // empty: Lagrange for all (the step polynomials of §2.2). The explicit scheme only.
  std::vector<polynomials::Approximation> approximations;
  // A subsystem failure (an IDA error in a run) or a coupling variable that is not finite
  // rejects the attempt with r = 0.25 (D-26); after this many in a row the run stops with
  // SubsystemFailure or CouplingFailure. Fixed mode stops at the first.
  int max_consecutive_failures = 25;
  // The iterative schemes (implicit, semi-implicit, waveform: METHODS §4); empty: explicit
  // Jacobi (§3.1).
  std::optional<corrector::CorrectorOptions> corrector;
  // Gauss–Seidel instead of Jacobi (explicit only: corrector must be empty).
  std::optional<GaussSeidelOptions> gauss_seidel;
  // exLE and exMD in explicit steps: the largest prediction ratio ρ (control::prediction_ratio)
  // their estimate is trusted with; above it the estimate is raised by ρ/limit (METHODS §5.3,
  // D-52). 0: never raised (the seeds' estimators).
  double prediction_ratio_limit = 10.0;
  // `scheme = "auto"` (adaptive.hpp): every macro step explicit Jacobi, or the semi-implicit or
  // the implicit scheme of `corrector` (which must be set, iteration implicit; the semi-implicit
  // steps take the same options with one corrector pass), chosen from what the steps cost.
  bool adaptive = false;
};

// A subsystem could not integrate a step (fixed mode) or failed too often (controlled mode).
class SubsystemFailure : public std::runtime_error {
 public:
  SubsystemFailure(const std::string& what, std::size_t subsystem, double time)
      : std::runtime_error(what), subsystem_(subsystem), time_(time) {}
  std::size_t subsystem() const { return subsystem_; }
  double time() const { return time_; }

 private:
  std::size_t subsystem_;
  double time_;
};

// A coupling law's value at the end of a macro step was NaN or infinite (the law could not
// evaluate the subsystems' outputs there) in every attempt down to the failure limit, or with a
// fixed H. what() names the coupling variable, its value and the step; time() is the last
// accepted point.
class CouplingFailure : public std::runtime_error {
 public:
  CouplingFailure(const std::string& what, double time) : std::runtime_error(what), time_(time) {}
  double time() const { return time_; }

 private:
  double time_;
};

// A subsystem's model asked to terminate the simulation (an FMU's terminateSimulation, an FMU
// Co-Simulation step that ends it) in the macro step after `time`, the last accepted point,
// where the run ends: the results up to it are complete, and the run counts as ended by the
// model, not failed. what() names the subsystem, the model's time and its reason.
class ModelTerminatedRun : public SubsystemFailure {
 public:
  using SubsystemFailure::SubsystemFailure;
};

// One accepted macro point, handed to the observer: outputs[i] are subsystem i's outputs at
// time, u the coupling variables u_M, pass[i] subsystem i's part of the pass the executor
// accepted (its nominal run's output samples inside the step, with an output grid: runner::
// RunResult::sample_times; empty for the initial point). The spans are valid during the call
// only.
struct AcceptedPoint {
  std::uint64_t step = 0;  // N after acceptance (0 for the initial point)
  double time = 0.0;
  int kappa = 0;   // degree used for the step that ended here
  double h = 0.0;  // its size
  std::span<const std::vector<double>> outputs;
  std::span<const double> u;
  double start = 0.0;  // T_N, where the step began (time for the initial point)
  std::span<const runner::PassResult> pass;
};

// Time breakdown of seed 000 §4.4 / Eq. 4.5 (nanoseconds of wall time).
struct TimeBreakdown {
  std::int64_t solver_ns = 0;      // max over L of Σ_N T_{L,N} (nominal runs, every pass)
  std::int64_t idle_ns = 0;        // Σ_N max_L T_{L,N} − solver (Eq. 4.5)
  std::int64_t extra_runs_ns = 0;  // comparison and perturbed runs (summed over subsystems)
  std::int64_t interface_ns = 0;   // predictor, polynomials, coupling update, estimate, control
  std::int64_t snapshot_ns = 0;    // max over L of its snapshot time
  std::int64_t executor_ns = 0;    // wall time inside Executor::step (all runs, parallel)
  // Σ_N (slowest subsystem's send-to-reply time − its busy time); process executor only.
  std::int64_t communication_ns = 0;
  std::int64_t observer_ns = 0;  // output
  std::int64_t total_ns = 0;
};

// The corrector's work (METHODS §4, MODELS §4.3): iterative schemes only.
struct CorrectorStatistics {
  std::uint64_t attempts = 0;              // attempts that ran a predictor
  std::uint64_t passes = 0;                // corrector passes after the predictors (N_cor)
  std::uint64_t max_passes = 0;            // most corrector passes in one attempt
  std::uint64_t jacobian_evaluations = 0;  // interface Jacobians assembled and factorised
  // Gauss–Seidel: the largest change estimated to remain after an accepted attempt's last
  // repetition, in units of the coupling weights (AttemptResult::iteration_residual); the
  // semi-implicit scheme: the largest coupling mismatch its corrector pass left.
  double max_iteration_residual = 0.0;
  double mean_passes() const {
    return attempts > 0 ? static_cast<double>(passes) / static_cast<double>(attempts) : 0.0;
  }
};

// The explicit estimators' premise check (SchemeOptions::prediction_ratio_limit): attempts whose
// estimate was raised because the coupling variables left the comparison's extrapolation by more
// than the limit, and the largest factor applied.
struct EstimateRaises {
  bool checked = false;  // some attempt ran the check (exLE or exMD, limit > 0)
  std::uint64_t attempts = 0;
  double max_factor = 1.0;
  // Attempts with AttemptResult::unseen_miss (judged by the coupling variables' miss), and the
  // start of the first.
  std::uint64_t unseen = 0;
  double first_unseen = 0.0;
};

// The consistent update's work with evaluated outputs (METHODS §1.1, D-1; FeedthroughUpdate):
// systems with a feed-through subsystem whose outputs are not affine in its inputs.
struct ConsistentUpdateStatistics {
  std::uint64_t newton_iterations = 0;      // Newton steps, summed over attempts
  std::uint64_t output_evaluations = 0;     // Executor::evaluate_outputs calls (one per step)
  std::uint64_t subsystem_evaluations = 0;  // subsystems asked in them, summed
};

// The schemes `scheme = "auto"` chooses from for a macro step (adaptive.hpp).
enum class StepKind : std::uint8_t { kExplicit, kSemiImplicit, kImplicit };
// "explicit", "semi-implicit", "implicit": the names of --scheme.
inline constexpr model::NameTable<StepKind, 3> kStepKindNames{{
    {StepKind::kExplicit, "explicit"},
    {StepKind::kSemiImplicit, "semi-implicit"},
    {StepKind::kImplicit, "implicit"},
}};
const char* to_string(StepKind kind);

// The choice of `scheme = "auto"` (adaptive.hpp): its steps and work per scheme, and every
// switch with its reason. Empty for the other schemes.
struct SchemeChoiceStatistics {
  struct PerScheme {
    std::uint64_t attempts = 0, accepted = 0;
    double work = 0.0;  // of every run of its attempts (PassRunner::attempt_work)
    double time = 0.0;  // simulated time its accepted steps covered
  };
  struct Switch {
    double time = 0.0;  // T_N of the first step in the new scheme
    StepKind from = StepKind::kExplicit, to = StepKind::kExplicit;
    std::string reason;
  };
  bool used = false;
  PerScheme explicit_steps, semi_implicit_steps, implicit_steps;
  std::uint64_t switches = 0;
  // Probes not made because the other scheme's last measured rate was far above (adaptive.hpp).
  std::uint64_t skipped_probes = 0;
  // Semi-implicit steps repeated as implicit ones for their coupling mismatch (adaptive.hpp).
  std::uint64_t escalated = 0;
  std::vector<Switch> recent;  // the last kRecentSwitches switches, oldest first
  // Non-empty when some scheme cannot run this system (auto then chooses among the others).
  std::string only_reason;
  static constexpr std::size_t kRecentSwitches = 64;
};

// The subsystem integrations of a run, summed over subsystems and passes (accepted and rejected
// attempts alike): one nominal run per subsystem and pass, and the extra runs (comparison and
// perturbed runs) beside them. What a macro step costs in integrations, whatever the machine.
struct IntegrationCounts {
  std::uint64_t nominal = 0;
  std::uint64_t extra = 0;
};

struct SchemeResult {
  control::MacroStepStatistics steps;
  IntegrationCounts integrations;
  CorrectorStatistics corrector;
  SchemeChoiceStatistics scheme_choice;
  ConsistentUpdateStatistics consistent_update;
  EstimateRaises estimate_raises;
  std::vector<ida::AdvanceStats> subsystem_stats;
  std::vector<double> subsystem_solver_ns;  // Σ_N T_{L,N} per subsystem
  TimeBreakdown time;
  double end_time = 0.0;  // t_end, or the last accepted point of a run that failed
  double mean_h() const;
};

// The diagnostics of one macro-step attempt, accepted or rejected (the steps file of
// the run driver: docs/reference/commands.md). Handed to the ProgressObserver after the verdict is
// applied (executor accepted or rejected, accepted-point observer called); the span is valid during
// the call only.
struct StepRecord {
  std::uint64_t attempt = 0;  // 1-based over the run; a continued run counts on from its checkpoint
  control::StepPlan plan;     // T_N = plan.t_begin, H = plan.h(), κ = plan.kappa
  bool accepted = false;
  // The scaled error norm the local error test compared with 1 (ErrorEstimate::norm); NaN when
  // the attempt has no estimate (no estimator, a corrector or subsystem failure).
  double error_estimate = 0.0;
  int corrector_passes = 0;  // executor passes beyond the first (AttemptResult::corrector_passes)
  // The attempt ran a corrector (AttemptResult::iterative): scheme auto's implicit and
  // semi-implicit steps; semi_implicit tells the latter (AttemptResult::semi_implicit).
  bool iterative = false;
  bool semi_implicit = false;
  // A semi-implicit step's coupling mismatch ‖φ(y^c) − s^c‖ in the weights of the iterate test
  // (AttemptResult::iteration_residual; for one that scheme auto repeated as an implicit step,
  // the mismatch that made it repeat: AttemptResult::escalated_mismatch); 0 for other steps.
  double coupling_mismatch = 0.0;
  // Wall time of the attempt in the master, from the plan to the executor's accept() or reject()
  // (the observers of accepted points and checkpoints excluded).
  std::int64_t wall_ns = 0;
  // Per subsystem its solver time in this attempt: Σ over the attempt's passes of the nominal
  // run's solver_ns (PassOutcome). Summed over all attempts of a run these are exactly
  // SchemeResult::subsystem_solver_ns.
  std::span<const std::int64_t> solver_ns;
  // Per subsystem the attempt's extra runs (PassRunner::attempt_extra_runs, attempt_extra_ns)
  // and the wall time the master spent inside the executor (all passes): with solver_ns the
  // trace from which a run's wall time on another number of cores is projected.
  std::span<const std::int64_t> extra_runs;
  std::span<const std::int64_t> extra_ns;
  std::int64_t executor_ns = 0;
};

using AcceptedObserver = std::function<void(const AcceptedPoint&)>;
// Called after every attempt (accepted or not) with its diagnostics (progress line, steps file);
// may be empty.
using ProgressObserver = std::function<void(const StepRecord&)>;

// Whether a run with these options needs executor rollback (snapshots): a controlled step size
// (rejections), extra runs, or more than one pass per step (iterative schemes, Gauss–Seidel).
bool needs_rollback(const SchemeOptions& options);

// u^pre = P_κ(T_{N+1}) from the accepted history (METHODS §2.2, Eq. 2.23), or the
// least-squares predictor (§2.3) when the options ask for it and the history is long enough.
void predict(const SchemeOptions& options, const polynomials::CouplingHistory& history, int kappa,
             double t_next, std::span<double> u_pre);

// The initial macro point T_0: every subsystem's consistent initial outputs with u0.
void initial_outputs(const system::CoupledSystem& system, std::span<const double> u0,
                     std::vector<std::vector<double>>& outputs);

// What an attempt of a scheme gives the pipeline.
struct AttemptResult {
  // An executor pass failed (a subsystem's IDA error): the attempt is rejected (D-26).
  bool subsystem_failed = false;
  std::size_t failed_subsystem = 0;
  std::string error;
  bool model_terminated = false;  // the failure is the model's request to end the simulation
  // An iterative scheme's corrector did not converge: rejected with r = 0.25 (D-26).
  bool corrector_failed = false;
  // Otherwise: the a-posteriori estimate of the attempt (kNone in fixed mode without one), and
  // the estimator that made it where it is not the plan's (control::StepOutcome::estimator).
  control::ErrorEstimate estimate;
  control::Estimator estimator = control::Estimator::kNone;
  // Iterative schemes: passes after the predictor, and interface Jacobians assembled.
  int corrector_passes = 0;
  int jacobian_evaluations = 0;
  bool iterative = false;
  // An attempt of the semi-implicit scheme: one corrector pass (METHODS §4.4), or under scheme
  // auto more where it was repeated as an implicit step (escalated_mismatch > 0).
  bool semi_implicit = false;
  // Gauss–Seidel: the change estimated to remain in the repeated end values after the last
  // repetition, in units of their weights (converged: ≤ GaussSeidelOptions::tolerance); 0 when
  // nothing repeated. Semi-implicit: ‖φ(y^c) − s^c‖, the coupling mismatch its one corrector
  // pass leaves (a further pass would start from it), in the weights of the iterate test.
  double iteration_residual = 0.0;
  // Scheme auto: a semi-implicit step repeated as an implicit one (AdaptiveScheme::escalate):
  // the mismatch its semi-implicit pass left (iteration_residual is then the implicit step's, 0);
  // 0 for every other attempt.
  double escalated_mismatch = 0.0;
  // exLE / exMD with a prediction_ratio_limit: the factor by which the prediction ratio raised
  // the estimate (1: not raised); NaN where no check ran.
  double estimate_raise = std::numeric_limits<double>::quiet_NaN();
  // exLE / exMD: the state estimate was 0 while the coupling variables missed their prediction by
  // more than their tolerance (‖u_{N+1} − u^pre‖ > 1 in exCV's norm): the comparison moved
  // nothing, as on a history of equal values before a jump, and no raise can scale 0. `estimate`
  // is then that miss (exCV's estimate), which fails the error test.
  bool unseen_miss = false;
};

// The executor passes of an attempt, with the time breakdown kept on the way. A scheme calls
// pass() once (explicit) or several times (a corrector); each integrates every subsystem from
// T_N (executor.hpp). outputs() and u_next() are the scheme's to fill: the nominal outputs
// y_{N+1} and u_{N+1} of the attempt, which the pipeline hands to the controller and observers.
class PassRunner {
 public:
  PassRunner(executors::Executor& executor, SchemeResult& result,
             const system::CoupledSystem& system);
  // Runs one pass to t_end with `commands` (one per subsystem); returns its outcome (valid
  // until the next pass).
  const executors::PassOutcome& pass(double t_end,
                                     std::span<const executors::SubsystemCommand> commands);
  std::int64_t executor_ns() const { return executor_ns_; }  // of the current attempt
  // The work of the current attempt: per subsystem its solver calls (residual evaluations,
  // Jacobian evaluations and linear-solver setups of every run, nominal and extra, of every
  // pass) times its size (state_size(), at least 1), summed over the subsystems. A call's cost
  // grows about linearly with the size (a residual, a sparse Jacobian and its KLU factorisation
  // of a chain); unweighted, the many cheap calls of small subsystems would outweigh the few
  // dear ones of a large one (docs/design/methods.md §4.8). The same in every executor (the
  // counters come with the replies), so that a choice made from it is too (contract 1); a
  // measure of work, not of time.
  double attempt_work() const { return attempt_work_; }
  // Per subsystem the nominal runs' solver time of the current attempt (all its passes).
  std::span<const std::int64_t> attempt_solver_ns() const { return attempt_solver_ns_; }
  // Per subsystem the extra runs of the current attempt (all its passes): their count and the
  // sum of their integration times (each run's AdvanceStats::wall_ns: work, whatever number of
  // threads ran them side by side).
  std::span<const std::int64_t> attempt_extra_ns() const { return attempt_extra_ns_; }
  std::span<const std::int64_t> attempt_extra_runs() const { return attempt_extra_runs_; }

  // The output evaluation after the attempt's last pass (Executor::evaluate_outputs; its wall
  // time counts as executor time, and it is counted in SchemeResult::consistent_update). The
  // outcome is valid until the next call. `side`: Executor::evaluate_outputs'.
  const executors::EvaluationOutcome& evaluate_outputs(
      std::span<const std::vector<double>> inputs,
      runner::EventSide side = runner::EventSide::kBefore);
  // The same for the consistent update's evaluator (system::OutputEvaluator): the outputs and
  // ∂y/∂u of every asked subsystem (non-empty inputs[i]) into y[i] and d[i]. nullptr on success,
  // else the failed outcome (which names the subsystem; valid until the next call).
  const executors::EvaluationOutcome* evaluate_outputs_into(
      std::span<const std::vector<double>> inputs, std::span<std::vector<double>> y,
      std::span<std::vector<double>> d, runner::EventSide side = runner::EventSide::kBefore);
  ConsistentUpdateStatistics& consistent_update_statistics() { return result_.consistent_update; }

  std::vector<std::vector<double>>& outputs() { return outputs_; }
  // The outcome of the last pass (the one accept() takes).
  const executors::PassOutcome& last_pass() const { return outcome_; }
  // Subsystem i's full state at the accepted time T_N (Executor::accepted_state; between passes).
  void accepted_state(std::size_t i, std::span<double> z) const { executor_.accepted_state(i, z); }
  std::vector<double>& u_next() { return u_next_; }
  void begin_attempt();

 private:
  executors::Executor& executor_;
  SchemeResult& result_;
  executors::PassOutcome outcome_;
  executors::EvaluationOutcome evaluation_;
  std::vector<std::vector<double>> outputs_;
  std::vector<double> u_next_;
  std::int64_t executor_ns_ = 0;
  double attempt_work_ = 0.0;
  std::vector<double> work_weights_;  // per subsystem: max(1, state_size())
  std::vector<std::int64_t> attempt_solver_ns_;
  std::vector<std::int64_t> attempt_extra_ns_;
  std::vector<std::int64_t> attempt_extra_runs_;
};

// The state given in a Continuation does not fit the run (a checkpoint of another
// configuration): thrown by run_scheme before any step.
class ContinuationMismatch : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A co-simulation scheme: what happens in one attempt of a planned macro step.
class MacroStepScheme {
 public:
  virtual ~MacroStepScheme() = default;
  // Called once before the first attempt; the system must outlive the run. Throws
  // std::invalid_argument for options this scheme cannot run (naming the option).
  virtual void start(const system::CoupledSystem& system, const SchemeOptions& options) = 0;
  // One attempt of `plan` from T_N = history.newest_time(): runs passes through `runner` and
  // fills runner.outputs() and runner.u_next() unless a pass failed. Must not accept or reject.
  virtual AttemptResult attempt(const control::StepPlan& plan,
                                const polynomials::CouplingHistory& history,
                                PassRunner& runner) = 0;
  // After every attempt, the controller's verdict on it (a subsystem failure is a rejection):
  // for schemes that carry information from an accepted step to the next one.
  virtual void concluded(bool accepted) { (void)accepted; }
  // After concluded(), unless the run has finished: a step size and degree the next attempt
  // should take instead of the controller's (control::MacroStepController::resume_step), or
  // nullopt. Scheme auto: the H and κ that the kind of step it switched to last took.
  struct StepResumption {
    double h = 0.0;
    int kappa = 0;
  };
  virtual std::optional<StepResumption> resumed_step() const { return std::nullopt; }
  // Checkpoints: what the scheme carries from one macro step to the next, as arrays
  // of doubles (each scheme documents its layout), between macro steps after start(). A scheme
  // started with the same system and options that imports them continues bit-identically.
  // import_state throws std::invalid_argument for arrays that do not fit. Default: no state.
  virtual std::vector<std::vector<double>> export_state() const { return {}; }
  virtual void import_state(const std::vector<std::vector<double>>& state);
  // The local-error analysis (run/local_error.hpp): the macro points before the first step are
  // those of an exact solution, not of this scheme's own steps. times[j] are accepted points,
  // oldest first, the last one t_start; outputs[j][i] are subsystem i's outputs there. A scheme
  // that keeps something of past points beside the coupling history (the rates u̇ of seed-003
  // sets, Gauss–Seidel's own outputs) replaces it with what these give. Called after start(),
  // before the first attempt. Default: nothing kept, nothing to do.
  virtual void assume_exact_past(std::span<const double> times,
                                 std::span<const std::vector<std::vector<double>>> outputs) {
    (void)times;
    (void)outputs;
  }
  // After concluded(true) for a step that ended on an event (docs/design/methods.md §3.3):
  // outputs_after[i] are subsystem i's outputs after it. A scheme that keeps something of past
  // points beside the coupling history gives its newest point these values and holds what they
  // changed, as the controller does with the coupling variables
  // (polynomials::CouplingHistory::jump_newest). Default: nothing kept, nothing to do.
  virtual void at_event(std::span<const std::vector<double>> outputs_after) { (void)outputs_after; }
  // At the end of a run (also one that stops with an exception): the scheme's own statistics
  // into `result`. Default: none.
  virtual void add_statistics(SchemeResult& result) const { (void)result; }
};

// The scheme the options ask for (scheme_factory.cpp): GaussSeidel with options.gauss_seidel,
// AdaptiveScheme with options.adaptive, ExplicitJacobi without options.corrector, else
// IterativeScheme (implicit, semi-implicit, waveform: corrector->iteration).
std::unique_ptr<MacroStepScheme> make_scheme(const SchemeOptions& options);

// A run that continues a checkpoint, and the hook that writes them.
struct Continuation {
  // Non-null: continue from this exported controller (control::MacroStepController::
  // export_state) and scheme state instead of starting at t_start; the executor must hold every
  // subsystem's workspace of the same macro point. The initial point is not observed again.
  const std::vector<std::byte>* controller_state = nullptr;
  const std::vector<std::vector<double>>* scheme_state = nullptr;
  // Non-null: the stateful coupling laws' accepted state (system::CoupledSystem::
  // export_law_states) of the same macro point; null: their state at t0.
  const std::vector<std::vector<double>>* law_states = nullptr;
  // Attempts the continued run made before (StepRecord::attempt counts on from it).
  std::uint64_t attempts = 0;
  // Called after every attempt once its verdict is applied (executor accepted or rejected,
  // observers called): the run is between macro steps, where export_state of the controller,
  // the scheme and the executor describe one consistent macro point. May throw to stop the
  // run (a requested interrupt).
  std::function<void(const control::MacroStepController&, const MacroStepScheme&)> between_steps;
};

// Runs the co-simulation from options.control.t_start to t_end with `scheme`. The executor must
// have been created for `system` at t_start with u0 = system.initial_couplings(), with rollback
// enabled if needs_rollback(options). Throws std::invalid_argument for options that make no
// sense, SubsystemFailure, CouplingFailure, control::StepSizeUnderflow. `result` is filled in
// place: when the run stops with an exception it holds the statistics and time breakdown up to the
// last attempt (end_time = the last accepted macro point), so that a failed run's metadata can
// report them. `continuation` (optional) resumes a checkpoint and observes the points between macro
// steps; an exported state that does not fit throws std::invalid_argument or std::runtime_error
// before any step.
void run_scheme(const system::CoupledSystem& system, executors::Executor& executor,
                MacroStepScheme& scheme, const SchemeOptions& options,
                const AcceptedObserver& on_accepted, const ProgressObserver& on_progress,
                SchemeResult& result, const Continuation& continuation = {});

}  // namespace macrostep::schemes
