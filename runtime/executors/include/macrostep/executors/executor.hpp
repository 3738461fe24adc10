// How the master drives the subsystems (DESIGN.md data flow; METHODS.md §3.1 step 3, §4.7).
//
// An Executor drives one runner::SubsystemRunner per subsystem (in this process or in worker
// processes): each owns the subsystem's integrators and its workspace snapshot at the accepted
// macro point T_N. The schemes talk to the subsystems only through this interface, so that the
// in-process executor (the reference, contract 1), the process executor and the MPI bridge's
// executor are interchangeable without touching a scheme.
//
// Call order:
//   1. construct (every subsystem at its consistent initial state at t0 with the initial
//      coupling variables; that state is the first accepted state T_0)
//   2. per macro step: one or more step(T_{N+1}, commands, outcome) calls, each followed by any
//      number of evaluate_outputs() calls (the consistent update's output evaluations, only
//      after a step whose outcome is ok), then exactly one of accept() or reject().
//      - Every step() integrates every subsystem from the accepted state T_N, whatever earlier
//        step() calls of the same macro step did: an iterative scheme (a Newton corrector,
//        waveform relaxation) calls it once per pass with new support points and new extra runs
//        (METHODS §4.1-4.2, D-17), and a pass may drop runs an earlier pass had. T_{N+1} may
//        differ between passes.
//      - accept() makes the nominal states of the last step() the accepted state T_{N+1}.
//      - reject() discards the attempt (the next step() starts again from T_N).
//      More than one step() per macro step, extra runs and reject() need rollback
//      (ExecutorOptions::rollback, which the concrete executor passes to this base).
//      After a failed step (outcome.ok == false) call step() again or reject(); a step() that
//      throws counts as a failed one.
//   3. between macro steps: accepted_state(), export_state() and import_state() (refused during
//      a macro step; import_state() needs rollback). accepted_time(), total_stats() and
//      snapshot_ns() are queries, not refused at any point; between macro steps they describe
//      the accepted state and the work done so far.
// This base class enforces the order once, for every executor: its public methods are not
// virtual, throw std::logic_error for a call out of order (and std::invalid_argument /
// std::out_of_range for a wrong count or index) before anything is sent or changed, and only then
// call the concrete executor's private do_ method. A concrete executor can rely on being called
// in this order with arguments of the right sizes.
//
// Runs of one step: per subsystem the nominal run (its inputs from `nominal`) and zero or more
// extra runs with roles (runner::ExtraRun: a comparison run with its own polynomial, or a
// perturbed run that changes one input channel's end value of the nominal polynomial), each
// starting from the same T_N workspace (a clone) and integrated to the same T_{N+1}. Only the
// nominal run continues; extra runs are discarded. The outputs of every run at T_{N+1} are
// returned, extra runs in the order of the command.
//
// Determinism (contract 1): results do not depend on how runs are scheduled; every run is a
// pure function of the T_N workspace and its polynomial.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/executors/executor_options.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/polynomials/support_points.hpp"
#include "macrostep/runner/subsystem_runner.hpp"

namespace macrostep::executors {

// The work of one subsystem in one macro-step attempt.
struct SubsystemCommand {
  polynomials::SupportPoints nominal;
  std::vector<runner::ExtraRun> extra;
};

// One run's results at T_{N+1}: y (outputs), the nominal run's feed-through block ∂y/∂u of a
// subsystem with feed-through only (else empty; for the consistent update of METHODS D-1), and
// its counters. The runner's own type, so that a worker's reply decodes into it directly.
using RunOutcome = runner::RunResult;

// One subsystem's part of a pass: the nominal run, the extra runs in command order, and the
// wall times of both (runner::PassResult).
using SubsystemOutcome = runner::PassResult;

// Outputs of one subsystem evaluated at given inputs (Executor::evaluate_outputs).
struct EvaluatedOutputs {
  std::vector<double> outputs;      // y = g(z(T_{N+1}), u)
  std::vector<double> feedthrough;  // ∂y/∂u there, column-major (empty without feed-through)
};

// What one evaluate_outputs() call returns.
struct EvaluationOutcome {
  bool ok = true;
  // When !ok: the lowest subsystem whose model failed (an exception, a value that is not
  // finite), and why (naming the output, time and inputs). The executor's state is unchanged.
  std::size_t failed_subsystem = 0;
  std::string error;
  // Per subsystem (size subsystem_count()); only the evaluated subsystems' entries are written.
  std::vector<EvaluatedOutputs> subsystems;
};

// What one step() pass returns (the scheme's verdict on the macro step is control::StepOutcome).
struct PassOutcome {
  bool ok = true;
  // When !ok: which subsystem failed, and why (IDA error text with time). Pass again or reject;
  // the executor has not modified the accepted state.
  std::size_t failed_subsystem = 0;
  std::string error;
  // The failure is the model's request to terminate the simulation (runner::RunResult::
  // terminated): the scheme ends the run there instead of retrying the step.
  bool terminated = false;
  std::vector<SubsystemOutcome> subsystems;
  // Executors with a transport (processes): the slowest subsystem's send-to-reply time minus
  // its busy time in the worker; 0 in-process.
  std::int64_t communication_ns = 0;
};

// Subsystem i's part of a pass outcome from its runner, after the pass's runs (both executors
// that run a SubsystemRunner in this process use it). The first failure, if there is none yet
// in `outcome`, is recorded with its subsystem (the lowest failing one wins: callers go in
// subsystem order, whatever the scheduling, contract 1).
void collect_runner_outcome(const runner::SubsystemRunner& runner, std::size_t i,
                            PassOutcome& outcome);

// Subsystem i's output evaluation by its runner (runner::SubsystemRunner::evaluate_outputs) into
// `outcome`, the first failure recorded as collect_runner_outcome does. Both executors that hold
// a SubsystemRunner in this process use it (the in-process one, and the process executor for a
// hosted subsystem); the worker process calls the runner itself.
void evaluate_with_runner(runner::SubsystemRunner& runner, std::size_t i,
                          std::span<const double> inputs, runner::EventSide side,
                          EvaluationOutcome& outcome);

// Not thread-safe: one thread drives an executor.
class Executor {
 public:
  virtual ~Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  virtual std::size_t subsystem_count() const = 0;

  // Whether the executor keeps rollback snapshots (ExecutorOptions::rollback), fixed at
  // construction.
  bool rollback() const { return rollback_; }

  // A pass: integrates every subsystem from T_N to t_end (> T_N) with the runs of its command.
  // commands.size() == subsystem_count() (std::invalid_argument). Extra runs, and a step() after
  // an earlier one of the same macro step, need rollback (std::logic_error).
  void step(double t_end, std::span<const SubsystemCommand> commands, PassOutcome& outcome);

  // The output evaluation of the consistent update (METHODS §1.1, D-1; seed 000 Eq. 2.22): for
  // every subsystem i with non-empty inputs[i] (size subsystem(i).input_size()) its outputs
  // y_i = g_i(z_i(T_{N+1}), u_i) and ∂y_i/∂u_i at the end state of the last step()'s nominal run,
  // with the inputs u_i = inputs[i] (runner::SubsystemRunner::evaluate_outputs, wherever the
  // subsystem runs: contract 1). Subsystems with empty inputs[i] are not asked (nothing is sent to
  // them). inputs.size() == subsystem_count(). Allowed only after a step() whose outcome was ok
  // and before accept() / reject() (std::logic_error), any number of times: it integrates
  // nothing and changes no state, so accept() takes the nominal end state as without it. A
  // model's failure is reported in outcome (ok false); a worker that dies or hangs throws as in
  // step(). The caller owns `outcome`; its vectors are reused between calls. Where a nominal run
  // handled an event at T_{N+1} (runner::RunResult::event_outputs), `side` picks the state
  // before it (the step's own end, the default) or after it (where the next step starts).
  void evaluate_outputs(std::span<const std::vector<double>> inputs, EvaluationOutcome& outcome,
                        runner::EventSide side = runner::EventSide::kBefore);

  // The nominal states of the last step() become the accepted state (snapshots are taken if
  // rollback is enabled). Requires a step() since the last accept() / reject() whose outcome was
  // ok.
  void accept();

  // Discards the attempt; the next step() starts again from T_N. Requires rollback and a step()
  // since the last accept() / reject() (failed or not).
  void reject();

  virtual double accepted_time() const = 0;
  // Full state z of subsystem i at the accepted time (size state_size()); between macro steps.
  void accepted_state(std::size_t i, std::span<double> z) const;

  // Work counters summed over every run (nominal and extra, rejected attempts included).
  ida::AdvanceStats total_stats(std::size_t i) const;

  // Between macro steps: writes subsystem i's accepted workspace T_N to `path` (returns its
  // bytes), or replaces it by the one in `path`. Any executor reads what any executor wrote, for
  // the same subsystem and solver options; afterwards the subsystem continues bit-identically to
  // the one that exported (contract 2): a checkpoint, or a restarted worker that continues a
  // run. The caller keeps every subsystem at one T_N (accepted_time() becomes the imported
  // time). import_state needs rollback (std::logic_error); std::runtime_error names the path or
  // the mismatch.
  std::size_t export_state(std::size_t i, const std::string& path);
  void import_state(std::size_t i, const std::string& path);

  // Wall time subsystem i spent on workspace snapshots so far: saves at accept(), restores at
  // reject() and the clones for extra runs ("sws dump", seed 000 §4.4).
  std::int64_t snapshot_ns(std::size_t i) const;

 protected:
  explicit Executor(bool rollback) : rollback_(rollback) {}

  // No step() since the last accept() / reject() (or since construction).
  bool between_steps() const { return phase_ == Phase::kBetween; }

 private:
  // The concrete executor's work, called by the public methods above once their checks passed
  // (indices in range, sizes right, the call order kept). An exception from do_step leaves the
  // executor as after a failed step; do_accept / do_reject are called after the executor has
  // left the macro step, so whatever they throw, the next step() starts a new one.
  virtual void do_step(double t_end, std::span<const SubsystemCommand> commands,
                       PassOutcome& outcome) = 0;
  virtual void do_evaluate_outputs(std::span<const std::vector<double>> inputs,
                                   runner::EventSide side, EvaluationOutcome& outcome) = 0;
  virtual void do_accept() = 0;
  virtual void do_reject() = 0;
  virtual void do_accepted_state(std::size_t i, std::span<double> z) const = 0;
  virtual ida::AdvanceStats do_total_stats(std::size_t i) const = 0;
  virtual std::size_t do_export_state(std::size_t i, const std::string& path) = 0;
  virtual void do_import_state(std::size_t i, const std::string& path) = 0;
  virtual std::int64_t do_snapshot_ns(std::size_t i) const = 0;

  // Where the executor stands in the call order: between macro steps, after a step() whose
  // outcome was ok, or after one that failed (or threw).
  enum class Phase : std::uint8_t { kBetween, kStepped, kFailed };
  void check_index(std::size_t i, const char* method) const;

  const bool rollback_;
  Phase phase_ = Phase::kBetween;
};

}  // namespace macrostep::executors
