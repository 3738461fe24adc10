// The process executor: every subsystem runs in its own process (`macrostep worker`, spawned
// from `executable`), talking to the master through lock-free rings in one shared-memory
// segment (DESIGN.md data flow, contracts 1, 3, 5; ipc/.../protocol.hpp for the
// messages and the segment layout). Results are bit-identical to InProcessExecutor's.
//
// Pieces: the messages travel through a RingTransport (ring_transport.hpp), the processes are
// started and watched by a ProcessSupervisor (worker_supervisor.hpp); this class is the executor
// logic on top of the two interfaces (WorkerTransport, WorkerSupervisor).
//
// Lifetime and call order (see executor.hpp for step/accept/reject):
//   - The constructor creates the segment, writes each subsystem's Cap'n Proto configuration
//     (its ModelDescription among it), spawns the workers (EXE worker --segment NAME
//     --segment-fd 3 --index I), waits for every handshake (options.handshake_timeout; a
//     timeout or a worker that exits names the subsystem), and then unlinks the segment name:
//     from then on nothing is left in /dev/shm whatever happens to the master. On any failure
//     it kills the workers it started and throws std::runtime_error.
//   - step() sends all commands first (waking the workers with one call), then waits once
//     until every reply is in (woken by the last worker) and collects them. While it waits it
//     checks the workers every options.poll_interval: a dead worker, or one whose progress counters
//     (bumped at every model evaluation) stood still for options.hang_timeout, throws
//     WorkerFailure naming the subsystem (1-based), the macro step (accepted steps + 1, and
//     the attempt) and its time interval; a hung worker is killed first. After a
//     WorkerFailure the executor is unusable (destroy it).
//   - accept() / reject() queue the command in every worker's ring and return (in an
//     oversubscribed run, where the workers sleep while they wait, without waking them: the
//     next step's wake-up delivers both commands); the
//     acknowledgements are collected before the next step's replies, or by accepted_state()
//     (which then reads the mirror the workers wrote), total_stats() and snapshot_ns(). A
//     failed accept / reject (or a worker dying meanwhile) is thrown from that later call.
//   - With ProcessOptions::max_restarts > 0 a WorkerFailure of step(), accept(), reject() and
//     the calls that collect acknowledgements is handled inside: the workers are replaced and
//     the call completes as if nothing had happened (see max_restarts); only when the
//     recoveries are used up does it propagate.
//   - The destructor sends kShutdown, waits up to options.shutdown_timeout for the workers to
//     exit, then SIGKILLs the rest and reaps them all.
// Not thread-safe: one thread drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/wait.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::executors {

// What every executor shares (ExecutorOptions: solver settings, rollback, jumps, threads; each
// worker receives its subsystem's in its Cap'n Proto SubsystemConfig), and the worker processes.
struct ProcessOptions : ExecutorOptions {
  // Extra runs per pass each worker is prepared for (sizes its wait policy; at most
  // ipc::kMaxRuns - 1).
  unsigned extra_runs = 1;
  // The master's wait policy; nullopt: WaitPolicy::adaptive(worker processes + 1, run CPUs),
  // and when that spins, sched_yield() calls after the spin before it sleeps (the workers always
  // use worker::worker_wait_policy).
  std::optional<ipc::WaitPolicy> wait;
  // The `macrostep` binary to spawn (it must have the `worker` subcommand).
  std::string executable = "/proc/self/exe";
  // Per subsystem the PUs to pin its process to; empty (or a missing entry) = unpinned.
  std::vector<std::vector<unsigned>> cpusets;
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds poll_interval{100};  // dead / hung worker checks while waiting
  // A worker whose integrators evaluate nothing for this long while the master waits for its
  // reply hangs (an endless loop or a deadlock in the model, a stopped process): it is killed
  // and reported as a WorkerFailure. 0 turns the check off. The default leaves room for a long
  // KLU factorization or a swapped-out process; runs with small subsystems may use seconds.
  std::chrono::milliseconds hang_timeout{60000};
  std::chrono::milliseconds shutdown_timeout{2000};
  // Run subsystem 1 in the master process (through the same SubsystemRunner a worker uses,
  // while the workers integrate) instead of in a worker: one process fewer to wake per macro
  // step. Results are bit-identical either way. worker_pids()[0] is then the master's pid.
  bool host_first_subsystem = false;
  // Crash recovery: when a worker dies or hangs, every worker process is replaced by
  // a new one that imports its subsystem's last saved accepted state (each worker writes it to
  // a recovery file in a private directory, see recovery_interval: an exact continuation,
  // contract 2, not a restart of the integrator), repeats the accepted steps since (the master
  // keeps their nominal inputs), and the interrupted pass, accept or reject is completed. The
  // results are bit-identical to an undisturbed run. At most this many recoveries per
  // executor; the next failure is a WorkerFailure as without recovery. 0: no recovery files, no
  // recovery. Needs rollback.
  unsigned max_restarts = 0;
  // Least time between two saves of a worker's accepted state for recovery (0: at every
  // accept); the accepted steps since are repeated by a replacement (cheap: nominal runs only).
  std::chrono::milliseconds recovery_interval{1000};
  // Told about every recovery that was started, as one sentence: "recovered from a worker
  // failure: <which worker failed how, during what>; ... continues from t = ..." or "recovery k
  // of n failed: <why>"; may be empty.
  std::function<void(const std::string&)> on_recovery;
  // The 1-based number that names worker i in messages (a group of a larger run, e.g. behind an
  // MPI node agent); empty or a missing entry: i + 1.
  std::vector<std::size_t> subsystem_numbers;
  // Called every poll_interval while the executor waits for its workers' replies (after the dead
  // and hung checks), so that an MPI node agent that is busy waiting can tell rank 0 it is alive
  // (a silent agent is taken for hung). Must not throw; may be empty.
  std::function<void()> while_waiting;
};

// One worker of a ProcessExecutor built without the coupled system (an MPI node agent drives
// the group of subsystems of its rank). `model` must outlive the constructor call.
struct ProcessWorkerSpec {
  const library::ModelDescription* model = nullptr;
  std::vector<double> initial_inputs;  // the subsystem's inputs at t0
  std::size_t outputs = 0, states = 0;
};

// A worker process died, hung, or its ring broke during a command.
class WorkerFailure : public std::runtime_error {
 public:
  WorkerFailure(const std::string& what, std::size_t subsystem, std::uint64_t step, double time)
      : std::runtime_error(what), subsystem_(subsystem), step_(step), time_(time) {}
  std::size_t subsystem() const { return subsystem_; }  // 0-based
  std::uint64_t macro_step() const { return step_; }    // accepted steps + 1
  double time() const { return time_; }                 // where the accepted results end

 private:
  std::size_t subsystem_;
  std::uint64_t step_;
  double time_;
};

class ProcessExecutor final : public Executor {
 public:
  // models[i] describes system.subsystem(i) (the worker builds its subsystem from it); u0: the
  // consistent initial coupling variables. system and models are read during construction only.
  ProcessExecutor(const system::CoupledSystem& system,
                  std::span<const library::ModelDescription> models, std::span<const double> u0,
                  const ProcessOptions& options);
  // The same for a group of subsystems given one by one, all starting at initial_time.
  ProcessExecutor(std::span<const ProcessWorkerSpec> workers, double initial_time,
                  const ProcessOptions& options);
  ~ProcessExecutor() override;
  ProcessExecutor(const ProcessExecutor&) = delete;
  ProcessExecutor& operator=(const ProcessExecutor&) = delete;

  std::size_t subsystem_count() const override;
  double accepted_time() const override;

  // Between macro steps: ends worker i's process (if it still runs), empties its rings and
  // starts a new process for it, which attaches to the running segment through the inherited
  // descriptor and rebuilds its subsystem from its configuration, at the initial state T_0.
  // Throws std::runtime_error if the new worker does not start (the executor is then unusable).
  // To continue a run, import_state(i, ...) its exported T_N before the next step.
  void restart_worker(std::size_t i);

  // Recoveries so far (ProcessOptions::max_restarts).
  unsigned recoveries() const;

  // Diagnostics and tests.
  const std::string& segment_name() const;
  std::vector<pid_t> worker_pids() const;
  // Sum over steps of the slowest subsystem's send-to-reply time minus its busy time in the
  // worker (transport and wake-up; the "communication" of the time breakdown).
  std::int64_t communication_ns() const;

 private:
  void do_step(double t_end, std::span<const SubsystemCommand> commands,
               PassOutcome& outcome) override;
  // One kEvaluate command to each asked worker (the hosted subsystem is evaluated in this
  // process meanwhile), one wake-up, one wait. With crash recovery, a worker failure during it
  // is recovered from like one during a pass: the workers are replaced, repeat the last pass's
  // nominal runs (the same end states) and the evaluation is repeated.
  void do_evaluate_outputs(std::span<const std::vector<double>> inputs,
                           EvaluationOutcome& outcome) override;
  void do_accept() override;
  void do_reject() override;
  void do_accepted_state(std::size_t i, std::span<double> z) const override;
  ida::AdvanceStats do_total_stats(std::size_t i) const override;
  std::int64_t do_snapshot_ns(std::size_t i) const override;
  std::size_t do_export_state(std::size_t i, const std::string& path) override;
  void do_import_state(std::size_t i, const std::string& path) override;

  // One pass of step(), without recovery.
  void run_pass(double t_end, std::span<const SubsystemCommand> commands, PassOutcome& outcome);
  void transfer_state(std::size_t i, ipc::CommandKind kind, const std::string& path);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace macrostep::executors
