// The process executor's state and its internal helpers, shared by the files that implement
// ProcessExecutor (process_executor.cpp: construction, stepping and queries; process_watch.cpp:
// dead, hung and unready workers; process_recovery.cpp: crash recovery). Not a public header.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tbb/task_arena.h>

#include "macrostep/executors/process_executor.hpp"
#include "macrostep/executors/worker_supervisor.hpp"
#include "macrostep/executors/worker_transport.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::executors {

namespace process_detail {

using Clock = std::chrono::steady_clock;

// What the master had asked the workers to do, for failure messages. Kept as numbers and
// formatted only when something fails: the macro-step loop does not pay for the text.
struct Operation {
  enum Kind : std::uint8_t { kStep, kAccept, kReject, kExport, kImport, kEvaluate } kind = kStep;
  std::uint64_t step = 0;     // the macro step (accepted steps + 1 while it is computed)
  std::uint64_t attempt = 0;  // step() calls so far (passes), rejected attempts included
  double begin = 0.0, end = 0.0;
};

// The operation in words, for failure messages ("macro step 3 (attempt 4) from t = ...").
std::string describe(const Operation& op);

// WorkerFailure::time(): where the run's accepted results end when `op` fails (T_N of a step
// or reject, the accepted point of an accept).
double resume_time(const Operation& op);

}  // namespace process_detail

using process_detail::Clock;
using process_detail::Operation;

struct ProcessExecutor::State {
  // One accepted macro step of one worker: from t_begin to t_end with these nominal inputs.
  struct AcceptedStep {
    double t_begin = 0.0, t_end = 0.0;
    model::SupportPoints nominal;
  };
  // What the executor keeps per worker besides its transport and its process.
  struct Worker {
    std::size_t outputs = 0;
    // The progress sum when last looked at and when it last changed. Read only while the master
    // waits past a poll interval: a command resets `progress_known`, the first check takes it.
    bool progress_known = false;
    std::uint64_t progress_seen = 0;
    Clock::time_point progress_at;
    // While the progress stands still: how long it may (hang_timeout, extended while the worker
    // waits for a CPU), and the scheduling sample that the current window began with.
    Clock::duration allowed{};
    Clock::time_point window_at;
    std::optional<SchedulingSample> window_start;
    ida::AdvanceStats total;
    std::int64_t snapshot_ns = 0;
    std::int64_t sent_ns = 0;
    std::int64_t ack_sent_ns = 0;  // when it acknowledged the accept / reject queued before
    std::size_t owed = 0;          // commands sent and not answered (replies not taken)
    // Counters of the processes this worker's replacements replaced (crash recovery).
    ida::AdvanceStats total_before;
    std::int64_t snapshot_ns_before = 0;
    // Recovery: the nominal support points of the last pass, and the accepted steps since the
    // state in the worker's recovery file (it saves one every recovery interval; the accept's
    // reply says when), which a replacement repeats after importing that file.
    model::SupportPoints pass_nominal;
    std::deque<AcceptedStep> since_saved;
  };

  // The executor talks to its workers through these two only (the supervisor may refer to the
  // transport: it is declared after it, so it goes first).
  std::unique_ptr<WorkerTransport> transport;
  std::unique_ptr<WorkerSupervisor> supervisor;
  // ProcessOptions::host_first_subsystem: subsystem 0 runs here, between sending the workers'
  // commands and collecting their replies, through the same SubsystemRunner a worker uses.
  std::unique_ptr<model::Subsystem> hosted_subsystem;
  std::unique_ptr<runner::SubsystemRunner> hosted;
  std::unique_ptr<tbb::task_arena> hosted_arena;
  std::vector<std::size_t> remote;  // the subsystems that have a worker process, ascending
  std::vector<Worker> workers;
  ProcessOptions options;
  double accepted_time = 0.0;
  bool broken = false;
  std::uint64_t attempt = 0;         // step() calls, rejected attempts included
  std::uint64_t accepted_steps = 0;  // accept() calls
  double step_begin = 0.0;
  Operation step_op;  // the current macro step
  std::int64_t communication_ns = 0;
  std::unique_ptr<ipc::StepCommand> command = std::make_unique<ipc::StepCommand>();
  std::unique_ptr<ipc::StepReply> reply = std::make_unique<ipc::StepReply>();
  std::uint64_t command_counter = 0;  // every command, for matching replies
  std::uint64_t pending_ack = 0;      // command id of unacknowledged accept / reject commands
  Operation pending_op;               // what they acknowledge
  // Commands were sent since the last WorkerTransport::wake(): ring before waiting for replies.
  bool unrung = false;
  // The workers sleep at once while waiting for a command (WorkerTransport::idle_workers_sleep,
  // an oversubscribed run): an accept /
  // reject is not worth waking them for by itself; it reaches them with the next command's
  // wake-up, which saves every worker one wake-up per macro step. When they spin, they take it
  // at once and save or restore their snapshot while the master works.
  bool defer_acks = false;
  double step_time = 0.0;  // subsystem 0's nominal time after the last step
  // Crash recovery (ProcessOptions::max_restarts).
  std::string recovery_dir;  // empty: no recovery
  unsigned recoveries = 0;
  double initial_time = 0.0;

  bool can_recover() const { return !recovery_dir.empty() && recoveries < options.max_restarts; }

  // Subsystem i's 1-based number in messages (ProcessOptions::subsystem_numbers).
  std::size_t number(std::size_t i) const {
    return i < options.subsystem_numbers.size() ? options.subsystem_numbers[i] : i + 1;
  }

  std::string recovery_path(std::size_t i) const { return recovery_file(recovery_dir, i); }
  // Worker i's process in messages, naming every subsystem it hosts: "subsystem 3 (pid 812)",
  // "subsystems 3, 4 (one worker process, pid 812)" (WorkerSupervisor::process_mates).
  std::string who(std::size_t i) const;
  // `which` and the workers that share a process with one of them, ascending.
  std::vector<std::size_t> with_mates(const std::vector<std::size_t>& which) const;

  [[noreturn]] void fail_dead(std::size_t i, const std::string& how, const Operation& during);

  // Throws WorkerFailure if worker i's progress has not moved for hang_timeout since it last did
  // (or since the first check after its command); a hung worker is killed (it would not answer
  // the shutdown). A worker that waited for a CPU meanwhile (process_scheduling.hpp) gets
  // another hang_timeout, up to kCpuWaitLimit times hang_timeout in all.
  static constexpr int kCpuWaitLimit = 10;
  void check_progress(std::size_t i, const Operation& during);

  void send(std::size_t i, const Operation& op);

  // Wakes the workers for the commands sent since the last wake-up (one call for all).
  void ring() {
    if (!unrung) return;
    unrung = false;
    transport->wake();
  }

  // What worker i is busy with while the master waits during `during`: the queued accept /
  // reject if it has not acknowledged it yet.
  const Operation& operation_of(std::size_t i, const Operation& during) const {
    return pending_ack != 0 && transport->replies_waiting(i) == 0 ? pending_op : during;
  }

  // Waits until every command sent has its reply; throws WorkerFailure if a worker ends, or one
  // that still owes a reply hangs, first.
  void await_replies(const Operation& during);

  // Takes worker i's next reply into *reply (after await_replies()).
  void take(std::size_t i, const Operation& during, std::uint64_t expected);

  // Sends one command of `kind` (accept / reject) to every worker without waiting: the
  // acknowledgements are collected by drain(), at the latest before the next step's replies,
  // which saves a round trip per macro step. A worker handles commands in order, so the next
  // step starts from the saved / restored state. Sleeping workers are not woken for it
  // (defer_acks).
  void broadcast(ipc::CommandKind kind, const Operation& op);

  // Collects the acknowledgements of the last accept / reject (no-op if there are none).
  void drain();

  // Takes the acknowledgements of the last accept / reject, which have come in (await_replies).
  void take_acks();

  // Waits until every worker in `which` has written its handshake; throws std::runtime_error
  // naming the first that fails to start, exits or times out.
  void await_handshakes(const std::vector<std::size_t>& which);

  void check_handshake(std::size_t i, const worker::HandshakeInfo& hs) const;

  // Builds subsystem 0 in this process from `spec` (host_first_subsystem).
  void host(const ProcessWorkerSpec& spec);

  // Subsystem 0's pass in this process (host_first_subsystem), while the workers integrate.
  void run_hosted(double t_end, const SubsystemCommand& c, PassOutcome& outcome);

  // One output evaluation (ProcessExecutor::evaluate_outputs) without recovery: a kEvaluate to
  // every remote subsystem asked, the hosted one evaluated here meanwhile, then the replies in
  // subsystem order (the lowest failure is reported, as in a pass).
  void evaluate_once(std::span<const std::vector<double>> inputs, runner::EventSide side,
                     EvaluationOutcome& outcome);

  // After a recovery during an output evaluation every worker stands at T_N: the last pass's
  // nominal runs again (a pure function of the T_N state and the polynomial, contract 2: the
  // same end states; the extra runs are not needed for an evaluation), so that the evaluation
  // can be repeated. Throws WorkerFailure like a pass.
  void repeat_nominal_pass();

  // One command (already in *command) to worker i alone, answered before it returns; throws
  // std::runtime_error with the worker's reason if it fails.
  void exchange(std::size_t i, const Operation& op);

  // Replaces every worker process after `failure` and brings each to the accepted state at
  // accepted_time, with nothing queued or owed (ProcessOptions::max_restarts). A failure of a
  // new worker meanwhile throws (WorkerFailure: the caller may recover again).
  void recover(const WorkerFailure& failure);

  void tell_recovery(const std::string& what) const;

  // Ends the workers of `which` (if they still run), has the transport forget the replies they
  // owed and empty their queues, and starts new ones, which attach to the transport and rebuild
  // their subsystems at T_0. Throws std::runtime_error (and marks the executor broken) if one
  // does not start.
  void replace_processes(const std::vector<std::size_t>& which);

  // A new worker i at T_0: imports its recovery file, then repeats the accepted steps since
  // the state in it (their nominal runs and accepts, each a pure function of the state and the
  // inputs: the same bits as the first time).
  void restore(std::size_t i);

  // Runs `operation`; a WorkerFailure is recovered from while recoveries are left (after which
  // every worker stands at accepted_time, as `operation` would have left them: an accept's new
  // state or a reject's old one), else it propagates.
  template <typename F>
  void recovering(F&& operation) {
    try {
      operation();
    } catch (const WorkerFailure& failure) {
      if (!can_recover()) throw;
      recover_repeatedly(failure);
    }
  }

  // recover() from `failure`, again while a new worker fails during it and recoveries are left
  // (each attempt names the failure it recovers from, not the one of the attempt before).
  void recover_repeatedly(const WorkerFailure& failure);

  void remove_recovery_directory() noexcept;

  void terminate() noexcept;
};

}  // namespace macrostep::executors
