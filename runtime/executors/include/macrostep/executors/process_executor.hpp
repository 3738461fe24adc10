// The process executor: every subsystem runs in its own worker (a `macrostep worker` process
// on this machine, spawned from `executable`), talking to the master through lock-free rings in
// one shared-memory segment (DESIGN.md data flow, contracts 1, 3, 5; ipc/.../protocol.hpp for
// the messages and the segment layout). Results are bit-identical to InProcessExecutor's.
//
// Pieces: the class is the executor logic and talks to its workers only through two
// interfaces, a WorkerTransport (the messages) and a WorkerSupervisor (starting and watching the
// workers), which it is given at construction (WorkerParts). make_ring_workers() builds the
// machine-local pair, RingTransport + ProcessSupervisor, and the convenience constructors use it;
// a test can hand over another implementation of the two interfaces.
//
// Lifetime and call order (see executor.hpp for step/accept/reject):
//   - The constructor starts every worker through the supervisor, waits for every handshake
//     (options.handshake_timeout; a timeout or a worker that exits names the subsystem), and then
//     tells the transport that all have attached (RingTransport unlinks the segment name: from
//     then on nothing is left in /dev/shm whatever happens to the master). On any failure it
//     ends the workers it started and throws std::runtime_error.
//   - step() sends all commands first (waking the workers with one call), then waits once
//     until every reply is in (woken by the last worker) and collects them. While it waits it
//     checks the workers every options.poll_interval: a dead worker, or one whose progress counters
//     (bumped at every model evaluation) stood still for options.hang_timeout, throws
//     WorkerFailure naming the subsystem (1-based), the macro step (accepted steps + 1, and
//     the attempt) and its time interval; a hung worker is killed first. After a
//     WorkerFailure the executor is unusable (destroy it).
//   - accept() / reject() queue the command in every worker's queue and return (when idle
//     workers sleep, WorkerTransport::idle_workers_sleep, without waking them: the next step's
//     wake-up delivers both commands); the acknowledgements are collected before the next step's
//     replies, or by accepted_state() (which then reads the state the workers published),
//     total_stats() and snapshot_ns(). A failed accept / reject (or a worker dying meanwhile) is
//     thrown from that later call.
//   - With ProcessOptions::max_restarts > 0 a WorkerFailure of step(), accept(), reject() and
//     the calls that collect acknowledgements is handled inside: the workers are replaced and
//     the call completes as if nothing had happened (see max_restarts); only when the
//     recoveries are used up does it propagate.
//   - The destructor asks the workers to shut down, waits up to options.shutdown_timeout for
//     them to end, then has the supervisor kill the rest.
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
#include "macrostep/executors/worker_supervisor.hpp"
#include "macrostep/executors/worker_transport.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/wait.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/worker/worker.hpp"

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
  // KLU factorization or a swapped-out process; runs with small subsystems may use seconds. A
  // worker that waited for a CPU meanwhile (WorkerSupervisor::scheduling) gets another
  // hang_timeout, up to ten in all.
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
  // Told when a worker that evaluated nothing for hang_timeout is given more time because it
  // waited for a CPU (hang_timeout above), once per such wait, as one sentence naming the worker
  // and the operation; the machine runs more busy processes than it has cores. May be empty.
  std::function<void(const std::string&)> on_cpu_wait;
  // Subsystem groups: each list of worker indices shares one worker process (`macrostep worker
  // --index I --index J ...`, worker::HandlerGroup: the group's runs on the process's TBB arena
  // of `threads`), so that fewer processes wake per macro step; every other worker has a process
  // of its own. Each index at most once; not subsystem 0 with host_first_subsystem. The master
  // still sees one worker per subsystem (its own rings, state mirror, handshake, recovery file);
  // a group's process failing fails all of them, named together, and crash recovery replaces
  // it whole. Results are bit-identical to one process per subsystem (contract 1).
  // placement::process_groups() forms them. Empty: one process per subsystem.
  std::vector<std::vector<std::size_t>> groups;
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

// The coupled system's subsystems as worker specifications (models[i] describes subsystem i;
// u0: the initial coupling variables). Throws std::invalid_argument for wrong sizes.
std::vector<ProcessWorkerSpec> worker_specs(const system::CoupledSystem& system,
                                            std::span<const library::ModelDescription> models,
                                            std::span<const double> u0);

// Worker i's configuration as every executor of worker processes hands it over (model, initial
// inputs, solver, rollback, jumps, extra runs, threads, index among n); the caller adds what is
// its own (pinning, master pid, recovery file).
worker::WorkerSetup worker_setup(const ProcessWorkerSpec& spec, std::size_t i, std::size_t n,
                                 const ProcessOptions& options);

// Throws std::invalid_argument if the options or the specifications do not fit the wire
// protocol (extra runs, outputs) or each other (recovery without rollback; groups that repeat
// or name an unknown subsystem, or subsystem 0 hosted in the master).
void check_process_options(std::span<const ProcessWorkerSpec> specs, const ProcessOptions& options);

// The worker processes of `workers` subsystems under `options` (hosted subsystem and groups
// counted: a group is one process).
std::size_t worker_processes(std::size_t workers, const ProcessOptions& options);

// Where worker i keeps its accepted state for recovery in directory `dir`.
std::string recovery_file(const std::string& dir, std::size_t i);

// What a ProcessExecutor drives. The supervisor may refer to the transport (its workers attach
// to it): the executor destroys the supervisor first.
struct WorkerParts {
  std::unique_ptr<WorkerTransport> transport;
  std::unique_ptr<WorkerSupervisor> supervisor;
  // The directory where the workers keep their recovery files (recovery_file(); their
  // configurations name them), or empty: no crash recovery. The executor removes it at its end.
  std::string recovery_dir;
};

// The machine-local workers of `specs`: a RingTransport holding every worker's configuration (a
// private recovery directory with ProcessOptions::max_restarts), and a ProcessSupervisor that
// spawns `options.executable` attached to its segment; the workers are not started yet. Throws
// what check_process_options() and RingTransport throw; leaves nothing behind then.
WorkerParts make_ring_workers(std::span<const ProcessWorkerSpec> specs,
                              const ProcessOptions& options);

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
  // The executor over `parts` (one worker per specification; specs[0] is built in this process
  // with ProcessOptions::host_first_subsystem, and that worker is never started), every
  // subsystem starting at initial_time. Starts the workers and waits for their handshakes.
  ProcessExecutor(WorkerParts parts, std::span<const ProcessWorkerSpec> specs, double initial_time,
                  const ProcessOptions& options);
  // Machine-local workers (make_ring_workers) for a group of subsystems given one by one.
  ProcessExecutor(std::span<const ProcessWorkerSpec> workers, double initial_time,
                  const ProcessOptions& options);
  // The same for the subsystems of a coupled system (worker_specs): models[i] describes
  // system.subsystem(i); u0: the consistent initial coupling variables. system and models are
  // read during construction only.
  ProcessExecutor(const system::CoupledSystem& system,
                  std::span<const library::ModelDescription> models, std::span<const double> u0,
                  const ProcessOptions& options);
  ~ProcessExecutor() override;
  ProcessExecutor(const ProcessExecutor&) = delete;
  ProcessExecutor& operator=(const ProcessExecutor&) = delete;

  std::size_t subsystem_count() const override;
  double accepted_time() const override;

  // Between macro steps: ends worker i (if it still runs), resets its queues and starts a new
  // worker for it, which attaches to the transport and rebuilds its subsystem from its
  // configuration, at the initial state T_0. A worker process that hosts a group
  // (ProcessOptions::groups) is replaced whole: every subsystem of it starts at T_0.
  // Throws std::runtime_error if the new worker does not start (the executor is then unusable).
  // To continue a run, import_state(i, ...) its exported T_N before the next step.
  void restart_worker(std::size_t i);

  // Recoveries so far (ProcessOptions::max_restarts).
  unsigned recoveries() const;

  // Diagnostics and tests: the transport's name (RingTransport: the segment's).
  std::string segment_name() const;
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
  void do_evaluate_outputs(std::span<const std::vector<double>> inputs, runner::EventSide side,
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
