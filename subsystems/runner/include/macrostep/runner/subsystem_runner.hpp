// SubsystemRunner: everything one subsystem does in a macro step (DESIGN.md data flow; METHODS.md
// §3.1 step 3, §4.2 perturbed runs, §4.7 rollback, §5.1 comparison runs, D-23).
//
// It owns the subsystem's nominal integrator, the workspace snapshot of the accepted macro point
// T_N and a pool of extra integrators, and runs one step's list of runs: the nominal run and any
// number of extra runs (comparison, perturbed), each integrated from the same T_N workspace (a
// clone restored from the snapshot) to the same T_{N+1} with its own input polynomial. Only the
// nominal run continues; extra runs are thrown away after their outputs are read. The in-process
// executor (one runner per subsystem, all runs in one TBB arena) and the worker process (one
// runner, its own arena) both drive it, so the integration logic exists once (contract 1).
//
// Call order (one driving thread; execute() may run on other threads):
//   1. construct: the nominal integrator at the subsystem's consistent initial state at t0, with
//      the constant initial inputs; that state is the first accepted state T_0.
//   2. per macro step, any number of passes from T_N (a corrector re-integrates several times):
//        prepare(t_end, nominal, extra)   sets the runs up; if the nominal run has advanced since
//                                         the last accept()/reject() it is first restored to T_N
//        execute(r) for r < run_count()   in any order, concurrently for distinct r (run_all()
//                                         does it on an arena); never throws
//        result(r), failure()             read after every execute() has returned
//        evaluate_outputs(u)              after a pass whose nominal run succeeded: y and ∂y/∂u
//                                         at its end state with other inputs (any number)
//      then exactly one of accept() (the nominal state at t_end becomes T_N, snapshot saved) or
//      reject() (the nominal integrator is restored to T_N).
//   3. accepted_state(), total_stats(), snapshot_ns() between steps.
// Extra runs and passes after the first need rollback (RunnerOptions::rollback); without it
// prepare() throws std::logic_error for them and reject() throws too.
//
// Determinism: a run's result depends only on the T_N workspace and its input polynomial, never
// on the pool integrator that computed it or on scheduling.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tbb/task_arena.h>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/model/support_points.hpp"
#include "macrostep/runner/jump_policy.hpp"

namespace macrostep::runner {

// What an extra run integrates with.
enum class RunRole : std::uint8_t {
  // Its own support points: the comparison run of exLE (degree κ+1) or exMD (end values û^pre)
  // (METHODS §5.1), or any other full polynomial.
  kComparison = 1,
  // The nominal polynomial with the end value of one input channel replaced: one column of the
  // finite-difference ∂y/∂u (METHODS §4.2). Travels as (channel, end value), not as a polynomial.
  kPerturbed = 2,
};

// One extra run of a step, in the order the caller wants the results.
struct ExtraRun {
  RunRole role = RunRole::kComparison;
  std::uint32_t channel = 0;    // kPerturbed: the subsystem's input channel (0-based)
  double end_value = 0.0;       // kPerturbed: its new end support value s_c
  model::SupportPoints points;  // kComparison: the run's polynomial

  static ExtraRun comparison(const model::SupportPoints& p) {
    ExtraRun r;
    r.role = RunRole::kComparison;
    r.points = p;
    return r;
  }
  static ExtraRun perturbed(std::uint32_t channel, double end_value) {
    ExtraRun r;
    r.role = RunRole::kPerturbed;
    r.channel = channel;
    r.end_value = end_value;
    return r;
  }
};

// Version of the bytes export_state() writes (RunnerState); import_state() accepts only its own.
// 1: the IDA workspace and the accepted input polynomial.
inline constexpr std::uint32_t kRunnerStateFormatVersion = 1;

struct RunnerOptions {
  ida::IntegratorOptions solver;
  // Keep a workspace snapshot of T_N: needed for reject(), extra runs and repeated passes. Off
  // only for the fixed-step scheme without an estimator (no snapshot cost).
  bool rollback = true;
  JumpOptions jumps;
  // > 0: the nominal run samples the outputs on this output grid (ida::Integrator::
  // set_output_grid), into RunResult::sample_times / sample_values.
  double output_interval = 0.0;
};

// The result of one run of the prepared step.
struct RunResult {
  std::vector<double> outputs;  // y at t_end (size output_size())
  // The nominal run of a subsystem with feed-through only (else empty): D = ∂y/∂u at t_end
  // (model::Subsystem::feedthrough_jacobian, column-major output_size() × input_size()), for the
  // master's consistent update (METHODS D-1). No integration: the outputs' own derivative.
  std::vector<double> feedthrough;
  ida::AdvanceStats stats;  // counters of this run (wall_ns: its integration)
  std::string error;        // empty if the run succeeded
  // The run ended because the model asked to terminate the simulation (ida::ModelTerminated;
  // `error` says where and why): the caller ends the run instead of retrying.
  bool terminated = false;
  // The nominal run with an output grid (RunnerOptions::output_interval): the grid times inside
  // the step and the outputs there (output_size() values per time, ida::OutputSamples). Empty
  // otherwise.
  std::vector<double> sample_times;
  std::vector<double> sample_values;
  // A run that handled an event at exactly t_end (ida::Integrator::event_at_end: a time event
  // the master's macro step ends on, or a state event that fell there): `outputs` and
  // `feedthrough` are those before the event, the left limit the integration over the step
  // reached, and event_outputs y after it, where the next step starts (size output_size()).
  // Empty without such an event.
  std::vector<double> event_outputs;
  // The time of the next time event the run's mode has scheduled after t_end
  // (model::Mode::next_time_event), +infinity for none or a model without events: where the
  // master ends a later macro step (METHODS §3.3).
  double next_event = std::numeric_limits<double>::infinity();
};

// Which state at t_end SubsystemRunner::evaluate_outputs evaluates when the nominal run handled
// an event there: the one before it (the step's own end, for the step's consistent update) or
// after it (where the next step starts). The same state without such an event.
enum class EventSide : std::uint8_t { kBefore, kAfter };

// One subsystem's results of a pass, wherever it ran (collected from its runner in this process,
// or read from its worker's reply, worker/wire.hpp): what the executors hand to the schemes.
struct PassResult {
  RunResult nominal;
  std::vector<RunResult> extra;  // in the order of the pass's extra runs
  std::int64_t solver_ns = 0;    // wall time of the nominal run (T_{L,N}, seed 000 Eq. 4.5)
  std::int64_t extra_ns = 0;     // wall time of the extra runs together (restores excluded)
};

class SubsystemRunner {
 public:
  // The subsystem must outlive the runner. initial_inputs: u(t0), size input_size().
  // Throws std::invalid_argument (sizes) or ida::IntegrationError (IDA set-up).
  SubsystemRunner(const model::Subsystem& subsystem, std::span<const double> initial_inputs,
                  const RunnerOptions& options);
  ~SubsystemRunner();
  SubsystemRunner(const SubsystemRunner&) = delete;
  SubsystemRunner& operator=(const SubsystemRunner&) = delete;

  // Liveness counters (the process executor's hang detection): counter(k) is given to the k-th
  // integrator (0 the nominal one, 1 + j pool integrator j) when it is created; it may return
  // nullptr. Set before the first prepare().
  void set_progress_counters(std::function<std::atomic<std::uint64_t>*(std::size_t)> counter);

  // Sets up a pass from T_N to t_end (> T_N). nominal.channels must equal input_size(); a
  // perturbed run's channel must be < input_size(). Throws std::invalid_argument for bad runs
  // and std::logic_error for extra runs or repeated passes without rollback. Copies what it
  // needs: `nominal` and `extra` may be discarded afterwards.
  void prepare(double t_end, const model::SupportPoints& nominal, std::span<const ExtraRun> extra);

  std::size_t run_count() const { return 1 + extra_count_; }  // of the prepared pass
  // Run r of the prepared pass (0 nominal, 1 + k extra run k). Records errors in result(r).
  void execute(std::size_t r) noexcept;
  // Every run of the prepared pass, on `arena` (nullptr or a single run: in this thread).
  void run_all(tbb::task_arena* arena);

  const RunResult& result(std::size_t r) const { return results_.at(r); }
  // The extra runs' results of the prepared pass, in order (result(1) .. result(run_count() - 1)).
  std::span<const RunResult> extra_results() const { return {results_.data() + 1, extra_count_}; }

  // The output evaluation of the master's consistent update (METHODS §1.1, D-1; seed 000
  // Eq. 2.22): y = g(z(t_end), u) and, with feed-through, D = ∂y/∂u (model::Subsystem::
  // feedthrough_jacobian) at the end state of the prepared pass's nominal run, with `inputs`
  // (size input_size()) instead of the run's own end inputs. No integration, no change of
  // state: any number of calls after a pass whose nominal run succeeded and before accept() /
  // reject() (std::logic_error otherwise; std::invalid_argument for the wrong input count). The
  // in-process executor and the worker process both call it, so evaluated outputs are the same
  // bits wherever the subsystem runs (contract 1). Never throws for the model's sake: a model
  // exception or a value that is not finite is returned in `error` (naming the output, the time
  // and the inputs). The result (stats zero) is valid until the next call or pass. `side` picks
  // the state before or after an event at t_end (RunResult::event_outputs).
  const RunResult& evaluate_outputs(std::span<const double> inputs,
                                    EventSide side = EventSide::kBefore);
  // The first failed run (lowest index) as "nominal run: ..." / "extra run: ...", or empty.
  // failed_run() is its index. Valid after the runs of a pass.
  std::string failure() const;
  std::size_t failed_run() const;
  // Whether that failure is the model's request to terminate (RunResult::terminated).
  bool terminated() const;
  // Wall time of the nominal run and the sum of the extra runs' (seed 000 Eq. 4.5 T_{L,N}).
  std::int64_t nominal_ns() const { return results_[0].stats.wall_ns; }
  std::int64_t extra_ns() const;

  void accept();
  void reject();

  // Between steps (after accept() or reject()): the time and state of T_N.
  double accepted_time() const;
  void accepted_state(std::span<double> z) const;
  // The nominal integrator's time now (t_end after a pass, T_N between steps).
  double time() const;

  // The accepted state T_N as bytes another process can import (ida::Integrator::
  // export_snapshot: a Cap'n Proto message with the whole IDA workspace), and its import into a
  // runner of the same subsystem and options: afterwards the runner is at that T_N and continues
  // bit-identically to the exporting one (contract 2). Both between steps (std::logic_error);
  // import_state needs rollback (std::logic_error), export_state does not (without it, it
  // snapshots the live workspace once). import_state throws what Integrator::import_snapshot
  // throws for bytes that are not for this subsystem, and leaves the runner unchanged then.
  // The bytes are a RunnerState message (ipc/schema/state.capnp): the IDA workspace and the
  // last accepted input polynomial, which JumpPolicy::kShift moves the history from, so a run
  // with jump_handling = shift continues bit-identically too.
  std::vector<std::byte> export_state() const;
  void import_state(std::span<const std::byte> bytes);
  // The same through a file: written to a temporary name beside `path` and renamed, so that
  // `path` is either the old file or the complete new one; std::runtime_error naming the path
  // and the system's reason if it cannot be written or read. Returns the bytes written. `durable`:
  // fsync before the rename (a checkpoint that must survive the machine); without it the file
  // survives the process only (crash recovery, which writes one at every accept).
  std::size_t export_state_to(const std::string& path, bool durable = true) const;
  void import_state_from(const std::string& path);

  // Work counters of every integrator, every run and pass included.
  ida::AdvanceStats total_stats() const;
  // Wall time of snapshot saves, restores and clones so far ("sws dump", seed 000 §4.4).
  std::int64_t snapshot_ns() const { return snapshot_ns_; }

 private:
  class Input;
  ida::Integrator& pool_integrator(std::size_t j);
  ida::AdvanceControl jump_control(const ida::Integrator& integ) const;
  void collect_clone_times();

  const model::Subsystem& subsystem_;
  RunnerOptions options_;
  std::function<std::atomic<std::uint64_t>*(std::size_t)> counter_;
  std::unique_ptr<Input> nominal_input_;
  // The nominal polynomial of the last accepted step (the initial constant inputs before the
  // first): the input the T_N history was integrated with (JumpPolicy::kShift).
  std::unique_ptr<Input> accepted_input_;
  std::unique_ptr<ida::Integrator> nominal_;
  std::unique_ptr<ida::WorkspaceSnapshot> snapshot_;  // T_N
  std::vector<std::unique_ptr<Input>> extra_inputs_;
  std::vector<std::unique_ptr<ida::Integrator>> pool_;
  std::vector<RunResult> results_;
  RunResult evaluated_;                   // the last evaluate_outputs()
  std::vector<double> end_z_, end_zp_;    // its scratch: the nominal end state
  std::vector<std::int64_t> restore_ns_;  // per run of the current pass
  std::size_t extra_count_ = 0;
  double t_end_ = 0.0;
  double accepted_time_ = 0.0;      // T_N
  mutable std::vector<double> zp_;  // scratch of accepted_state() (every accept in a worker)
  bool advanced_ = false;  // the nominal integrator has left T_N (a pass ran since accept/reject)
  std::int64_t snapshot_ns_ = 0;
};

// The prepared passes of several runners (prepare() called on each) as one set of tasks, every
// (runner, run) pair a task of `arena`; nullptr or a single task: one after the other in this
// thread. The in-process executor (every subsystem) and a worker process hosting a group of
// subsystems both call it, so that their runs are scheduled alike; each run's result depends on
// its runner alone (contract 1). `tasks` is the caller's scratch (kept to spare an allocation
// per step). Same thread rules as run_all(); never throws for a run's sake.
void run_prepared(std::span<SubsystemRunner* const> runners, tbb::task_arena* arena,
                  std::vector<std::pair<std::size_t, std::size_t>>& tasks);

}  // namespace macrostep::runner
