// Process executor (process_executor.hpp; DESIGN.md data flow, contracts 1, 3, 5). The executor
// logic lives here; the messages travel through a WorkerTransport (RingTransport) and the
// processes are started and watched by a WorkerSupervisor (ProcessSupervisor).
#include "macrostep/executors/process_executor.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <thread>

#include <tbb/task_arena.h>

#include "macrostep/executors/ring_transport.hpp"
#include "macrostep/executors/worker_replies.hpp"
#include "macrostep/executors/worker_supervisor.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::executors {

namespace {

using Clock = std::chrono::steady_clock;

// What the master had asked the workers to do, for failure messages. Kept as numbers and
// formatted only when something fails: the macro-step loop does not pay for the text.
struct Operation {
  enum Kind : std::uint8_t { kStep, kAccept, kReject, kExport, kImport, kEvaluate } kind = kStep;
  std::uint64_t step = 0;     // the macro step (accepted steps + 1 while it is computed)
  std::uint64_t attempt = 0;  // step() calls so far (passes), rejected attempts included
  double begin = 0.0, end = 0.0;
};

std::string describe(const Operation& op) {
  switch (op.kind) {
    case Operation::kAccept:
      return fmt::format("the accept of macro step {} at t = {:.9g}", op.step, op.end);
    case Operation::kReject:
      return fmt::format("the reject of macro step {} (attempt {}) from t = {:.9g} to {:.9g}",
                         op.step, op.attempt, op.begin, op.end);
    case Operation::kExport:
    case Operation::kImport:
      return fmt::format("the {} of the state at t = {:.9g}",
                         op.kind == Operation::kExport ? "export" : "import", op.end);
    case Operation::kEvaluate:
      return fmt::format("the output evaluation of macro step {} (attempt {}) at t = {:.9g}",
                         op.step, op.attempt, op.end);
    case Operation::kStep:
      break;
  }
  return fmt::format("macro step {} (attempt {}) from t = {:.9g} to {:.9g}", op.step, op.attempt,
                     op.begin, op.end);
}

// WorkerFailure::time(): where the run's accepted results end when `op` fails (T_N of a step
// or reject, the accepted point of an accept).
double resume_time(const Operation& op) {
  return op.kind == Operation::kStep || op.kind == Operation::kReject ||
                 op.kind == Operation::kEvaluate
             ? op.begin
             : op.end;
}

// How the master waits for replies unless ProcessOptions::wait says otherwise: spin while the
// master and its worker processes fit on the run's CPUs (with the first subsystem hosted, one
// process fewer: 2 subsystems on 2 CPUs then spin), then yield (hands the CPU to a worker or to
// other work queued on it, see worker.cpp), then sleep; sleep at once when they do not fit. The
// spin is short on purpose: beside other load on the machine a longer one kept the CPU from the
// worker it waited for (overhead bench, 2 subsystems, first hosted, 11 interleaved rounds under
// load 8-9: 8192 PAUSEs 181 us per macro step, 2048 PAUSEs 111 us, 256 PAUSEs 30-33 us, the same
// as sleeping at once; spinning at all pays only on an otherwise idle machine).
ipc::WaitPolicy master_wait_policy(std::size_t processes, std::size_t run_cpus) {
  constexpr std::uint32_t kSpinIterations = 256;
  constexpr std::uint32_t kYieldIterations = 2048;
  ipc::WaitPolicy policy = ipc::WaitPolicy::adaptive(processes, run_cpus, kSpinIterations);
  if (policy.spin_iterations > 0) policy.yield_iterations = kYieldIterations;
  return policy;
}

// A private directory for the workers' recovery files (ProcessOptions::max_restarts).
std::string make_recovery_directory() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "macrostep-recovery-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create a directory for the recovery files ({}): {}", pattern,
                    std::strerror(errno)));
  }
  return pattern;
}

}  // namespace

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

  std::unique_ptr<RingTransport> rings;
  std::unique_ptr<ProcessSupervisor> processes;
  // ProcessOptions::host_first_subsystem: subsystem 0 runs here, between sending the workers'
  // commands and collecting their replies, through the same SubsystemRunner a worker uses.
  std::unique_ptr<model::Subsystem> hosted_subsystem;
  std::unique_ptr<runner::SubsystemRunner> hosted;
  std::unique_ptr<tbb::task_arena> hosted_arena;
  std::vector<std::size_t> remote;  // the subsystems that have a worker process, ascending
  // The executor logic talks to these two only.
  WorkerTransport* transport = nullptr;
  WorkerSupervisor* supervisor = nullptr;
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
  // The workers sleep at once while waiting for a command (oversubscribed run): an accept /
  // reject is not worth waking them for by itself; it reaches them with the next command's
  // wake-up, which saves every worker one wake-up per macro step. When they spin, they take it
  // at once and save or restore their snapshot while the master works.
  bool defer_acks = false;
  double step_time = 0.0;  // subsystem 0's nominal time after the last step
  // Crash recovery (ProcessOptions::max_restarts).
  std::string recovery_dir;  // empty: no recovery
  unsigned recoveries = 0;
  double initial_time = 0.0;

  // Subsystem i's 1-based number in messages (ProcessOptions::subsystem_numbers).
  std::size_t number(std::size_t i) const {
    return i < options.subsystem_numbers.size() ? options.subsystem_numbers[i] : i + 1;
  }

  std::string recovery_path(std::size_t i) const {
    return fmt::format("{}/subsystem-{}.state", recovery_dir, i + 1);
  }

  [[noreturn]] void fail_dead(std::size_t i, const std::string& how, const Operation& during) {
    broken = true;
    throw WorkerFailure(fmt::format("subsystem {} (pid {}) {} during {}", number(i),
                                    supervisor->pid(i), how, describe(during)),
                        i, accepted_steps + 1, resume_time(during));
  }

  // Throws WorkerFailure if worker i's progress has not moved for hang_timeout since it last did
  // (or since the first check after its command); a hung worker is killed (it would not answer
  // the shutdown).
  void check_progress(std::size_t i, const Operation& during) {
    Worker& w = workers[i];
    const std::uint64_t now_seen = transport->progress(i);
    const auto now = Clock::now();
    if (!w.progress_known || now_seen != w.progress_seen) {
      w.progress_known = true;
      w.progress_seen = now_seen;
      w.progress_at = now;
      return;
    }
    if (options.hang_timeout.count() <= 0 || now - w.progress_at < options.hang_timeout) return;
    broken = true;
    const double idle = std::chrono::duration<double>(now - w.progress_at).count();
    supervisor->kill(i);
    throw WorkerFailure(
        fmt::format("subsystem {} (pid {}) hangs: no model evaluation for {:.1f} s (--hang-timeout "
                    "{:g} s) during {}; it was killed",
                    number(i), supervisor->pid(i), idle,
                    std::chrono::duration<double>(options.hang_timeout).count(), describe(during)),
        i, accepted_steps + 1, resume_time(during));
  }

  void send(std::size_t i, const Operation& op) {
    // At most two commands are in flight per worker, well below the queue's capacity: a send
    // that waits means the worker is gone or hung (or asleep before its commands' wake-up).
    while (transport->send(i, *command, options.poll_interval) == ipc::WaitStatus::kTimedOut) {
      if (const auto how = supervisor->ended(i)) fail_dead(i, *how, op);
      transport->wake();
    }
    workers[i].sent_ns = ipc::monotonic_ns();
    workers[i].progress_known = false;
    ++workers[i].owed;
    unrung = true;
  }

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
  void await_replies(const Operation& during) {
    ring();
    while (transport->await_replies(options.poll_interval) == ipc::WaitStatus::kTimedOut) {
      for (std::size_t j : remote) {  // every worker: the first death is reported at once
        if (const auto how = supervisor->ended(j)) fail_dead(j, *how, operation_of(j, during));
      }
      for (std::size_t j : remote) {
        if (transport->replies_waiting(j) < workers[j].owed) {
          check_progress(j, operation_of(j, during));
        }
      }
      if (options.while_waiting) options.while_waiting();
    }
  }

  // Takes worker i's next reply into *reply (after await_replies()).
  void take(std::size_t i, const Operation& during, std::uint64_t expected) {
    if (!transport->try_receive(i, *reply)) {
      broken = true;
      throw WorkerFailure(fmt::format("subsystem {}: no reply to command {} although every reply "
                                      "was counted, during {}",
                                      number(i), expected, describe(during)),
                          i, accepted_steps + 1, resume_time(during));
    }
    --workers[i].owed;
    if (reply->id != expected) {
      broken = true;
      throw WorkerFailure(fmt::format("subsystem {}: reply to command {} while waiting for {} "
                                      "during {}",
                                      number(i), reply->id, expected, describe(during)),
                          i, accepted_steps + 1, resume_time(during));
    }
    workers[i].total = worker::total_stats(*reply);
    workers[i].snapshot_ns = reply->snapshot_ns_total;
  }

  // Sends one command of `kind` (accept / reject) to every worker without waiting: the
  // acknowledgements are collected by drain(), at the latest before the next step's replies,
  // which saves a round trip per macro step. A worker handles commands in order, so the next
  // step starts from the saved / restored state. Sleeping workers are not woken for it
  // (defer_acks).
  void broadcast(ipc::CommandKind kind, const Operation& op) {
    if (broken) throw std::logic_error("ProcessExecutor: a worker has failed");
    drain();
    command->kind = kind;
    command->clear_runs();
    command->id = ++command_counter;
    for (std::size_t i : remote) send(i, op);
    pending_ack = command->id;
    pending_op = op;
    if (!defer_acks) ring();
  }

  // Collects the acknowledgements of the last accept / reject (no-op if there are none).
  void drain() {
    if (pending_ack == 0) return;
    await_replies(pending_op);
    take_acks();
  }

  // Takes the acknowledgements of the last accept / reject, which have come in (await_replies).
  void take_acks() {
    if (pending_ack == 0) return;
    const std::uint64_t expected = pending_ack;
    std::string error;
    std::size_t failed = 0;
    for (std::size_t i : remote) {
      take(i, pending_op, expected);
      workers[i].ack_sent_ns = reply->sent_ns;
      // The worker saved the state it accepted (recovery): nothing before it is repeated.
      if (pending_op.kind == Operation::kAccept && reply->exported_bytes > 0) {
        workers[i].since_saved.clear();
      }
      if (reply->status != ipc::ReplyStatus::kOk && error.empty()) {
        error = reply->error;
        failed = i;
      }
    }
    pending_ack = 0;
    if (!error.empty()) {
      broken = true;
      throw std::runtime_error(
          fmt::format("subsystem {}: {} failed: {}", number(failed), describe(pending_op), error));
    }
  }

  // Waits until every worker in `which` has written its handshake; throws std::runtime_error
  // naming the first that fails to start, exits or times out.
  void await_handshakes(const std::vector<std::size_t>& which) {
    const auto deadline = Clock::now() + options.handshake_timeout;
    for (std::size_t i : which) {
      for (;;) {
        if (const auto hs = rings->handshake(i)) {
          check_handshake(i, *hs);
          break;
        }
        if (const auto how = supervisor->ended(i)) {
          throw std::runtime_error(
              fmt::format("subsystem {}: its worker (pid {}) {} before its "
                          "handshake",
                          number(i), supervisor->pid(i), *how));
        }
        if (Clock::now() >= deadline) {
          throw std::runtime_error(fmt::format(
              "subsystem {}: its worker (pid {}) did not complete its handshake within {:.3g} s "
              "(raise it with --handshake-timeout or [executor] handshake_timeout)",
              number(i), supervisor->pid(i),
              std::chrono::duration<double>(options.handshake_timeout).count()));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }

  void check_handshake(std::size_t i, const worker::HandshakeInfo& hs) const {
    if (!hs.ready) {
      throw std::runtime_error(
          fmt::format("subsystem {}: its worker failed to start: {}", number(i), hs.error));
    }
    if (hs.protocol_version != ipc::kProtocolVersion ||
        hs.layout_version != ipc::kSegmentLayoutVersion ||
        hs.state_size != transport->state_size(i)) {
      throw std::runtime_error(
          fmt::format("subsystem {}: its worker speaks protocol {} / layout {} with {} states; the "
                      "master expects {} / {} / {}",
                      number(i), hs.protocol_version, hs.layout_version, hs.state_size,
                      ipc::kProtocolVersion, ipc::kSegmentLayoutVersion, transport->state_size(i)));
    }
  }

  // Subsystem 0's pass in this process (host_first_subsystem), while the workers integrate.
  void run_hosted(double t_end, const SubsystemCommand& c, PassOutcome& outcome) {
    runner::SubsystemRunner& h = *hosted;
    h.prepare(t_end, c.nominal, c.extra);
    h.run_all(hosted_arena.get());
    collect_runner_outcome(h, 0, outcome);
    step_time = h.time();
  }

  // One output evaluation (ProcessExecutor::evaluate_outputs) without recovery: a kEvaluate to
  // every remote subsystem asked, the hosted one evaluated here meanwhile, then the replies in
  // subsystem order (the lowest failure is reported, as in a pass).
  void evaluate_once(std::span<const std::vector<double>> inputs, EvaluationOutcome& outcome) {
    const std::size_t n = workers.size();
    const Operation op{Operation::kEvaluate, accepted_steps + 1, attempt, step_begin, step_op.end};
    const std::uint64_t first_id = command_counter + 1;  // subsystem i's command: first_id + i
    command->kind = ipc::CommandKind::kEvaluate;
    for (std::size_t i : remote) {
      if (inputs[i].empty()) continue;
      command->id = first_id + i;
      command->set_inputs(inputs[i]);
      send(i, op);
    }
    command_counter = first_id + n - 1;
    outcome.ok = true;
    outcome.error.clear();
    outcome.subsystems.resize(n);
    ring();
    if (hosted && !inputs[0].empty()) evaluate_with_runner(*hosted, 0, inputs[0], outcome);
    await_replies(op);
    for (std::size_t i : remote) {
      if (inputs[i].empty()) continue;
      take(i, op, first_id + i);
      read_evaluation_reply(*reply, i, workers[i].outputs, outcome);
    }
  }

  // After a recovery during an output evaluation every worker stands at T_N: the last pass's
  // nominal runs again (a pure function of the T_N state and the polynomial, contract 2: the
  // same end states; the extra runs are not needed for an evaluation), so that the evaluation
  // can be repeated. Throws WorkerFailure like a pass.
  void repeat_nominal_pass() {
    const std::uint64_t first_id = command_counter + 1;
    command->kind = ipc::CommandKind::kStep;
    command->t_end = step_op.end;
    for (std::size_t i : remote) {
      command->id = first_id + i;
      worker::pack_runs(*command, workers[i].pass_nominal, {});
      send(i, step_op);
    }
    command_counter = first_id + workers.size() - 1;
    await_replies(step_op);
    for (std::size_t i : remote) {
      take(i, step_op, first_id + i);
      if (reply->status != ipc::ReplyStatus::kOk) {
        broken = true;
        throw std::runtime_error(fmt::format("subsystem {}: the repeated {} failed: {}", number(i),
                                             describe(step_op), reply->error));
      }
    }
  }

  // One command (already in *command) to worker i alone, answered before it returns; throws
  // std::runtime_error with the worker's reason if it fails.
  void exchange(std::size_t i, const Operation& op) {
    command->id = ++command_counter;
    send(i, op);
    await_replies(op);
    take(i, op, command->id);
    if (reply->status != ipc::ReplyStatus::kOk) {
      throw std::runtime_error(fmt::format("subsystem {}: {}", number(i), reply->error));
    }
  }

  bool can_recover() const { return !recovery_dir.empty() && recoveries < options.max_restarts; }

  // Replaces every worker process after `failure` and brings each to the accepted state at
  // accepted_time, with nothing queued or owed (ProcessOptions::max_restarts). A failure of a
  // new worker meanwhile throws (WorkerFailure: the caller may recover again).
  void recover(const WorkerFailure& failure) {
    ++recoveries;
    for (std::size_t i : remote) {
      workers[i].total_before += workers[i].total;
      workers[i].snapshot_ns_before += workers[i].snapshot_ns;
      workers[i].total = {};
      workers[i].snapshot_ns = 0;
    }
    pending_ack = 0;
    unrung = false;
    broken = false;
    // A failure while the new workers start or catch up (a replayed step's worker dies too) is
    // named at the run's own macro step and time, not at a replayed step's, and the attempt is
    // told as a failed recovery: every recovery that was started is reported.
    std::string why;
    std::size_t subsystem = failure.subsystem();
    try {
      replace_processes(remote);
      for (std::size_t i : remote) restore(i);
    } catch (const WorkerFailure& again) {
      why = again.what();
      subsystem = again.subsystem();
    } catch (const std::runtime_error& e) {
      why = e.what();
    }
    if (!why.empty()) {
      tell_recovery(
          fmt::format("recovery {} of {} failed: {}", recoveries, options.max_restarts, why));
      throw WorkerFailure(fmt::format("during recovery {} of {} from \"{}\": {}", recoveries,
                                      options.max_restarts, failure.what(), why),
                          subsystem, accepted_steps + 1, accepted_time);
    }
    tell_recovery(fmt::format(
        "recovered from a worker failure: {}; every worker was restarted and continues from "
        "t = {:.9g} (recovery {} of {})",
        failure.what(), accepted_time, recoveries, options.max_restarts));
  }

  void tell_recovery(const std::string& what) const {
    if (options.on_recovery) options.on_recovery(what);
  }

  // Ends the processes of `which` (if they still run), forgets the replies they owed, empties
  // their rings and starts new ones, which attach through the inherited segment descriptor and
  // rebuild their subsystems at T_0. Throws std::runtime_error (and marks the executor broken)
  // if one does not start.
  void replace_processes(const std::vector<std::size_t>& which) {
    for (std::size_t i : which) processes->kill(i);
    rings->forget_replies();  // only the ended workers owed any
    for (std::size_t i : which) {
      rings->reset(i);
      workers[i].owed = 0;
      workers[i].progress_known = false;
    }
    try {
      for (std::size_t i : which) processes->start(i, rings->name(), rings->fd());
      await_handshakes(which);
    } catch (...) {
      broken = true;
      throw;
    }
  }

  // A new worker i at T_0: imports its recovery file, then repeats the accepted steps since
  // the state in it (their nominal runs and accepts, each a pure function of the state and the
  // inputs: the same bits as the first time).
  void restore(std::size_t i) {
    Worker& w = workers[i];
    double t = initial_time;
    if (std::filesystem::exists(recovery_path(i))) {
      command->kind = ipc::CommandKind::kImport;
      command->set_path(recovery_path(i));
      exchange(i, {Operation::kImport, accepted_steps, attempt, accepted_time, accepted_time});
      t = reply->time;
    }
    auto next = w.since_saved.begin();
    while (next != w.since_saved.end() && next->t_begin != t) ++next;
    if (t != accepted_time && next == w.since_saved.end()) {
      broken = true;
      throw std::runtime_error(fmt::format(
          "subsystem {}: cannot recover: its last saved state is at t = {:.9g}, the run at "
          "t = {:.9g}, and the steps between are not known",
          number(i), t, accepted_time));
    }
    for (; t != accepted_time; ++next) {
      command->kind = ipc::CommandKind::kStep;
      command->t_end = next->t_end;
      worker::pack_runs(*command, next->nominal, {});
      exchange(i, {Operation::kStep, accepted_steps, attempt, next->t_begin, next->t_end});
      command->kind = ipc::CommandKind::kAccept;
      command->clear_runs();
      exchange(i, {Operation::kAccept, accepted_steps, attempt, next->t_begin, next->t_end});
      t = reply->time;
    }
    w.total_before -= w.total;
    w.snapshot_ns_before -= w.snapshot_ns;
  }

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
  void recover_repeatedly(const WorkerFailure& failure) {
    for (;;) {
      try {
        recover(failure);
        return;
      } catch (const WorkerFailure&) {
        if (!can_recover()) throw;
      }
    }
  }

  void remove_recovery_directory() noexcept {
    if (recovery_dir.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(recovery_dir, ignored);
  }

  void terminate() noexcept {
    if (!rings || !processes) return;
    // Ask politely (a worker busy with a command replies to it first), then kill.
    rings->write_shutdown(broken ? "the run failed" : worker::kNormalShutdown);
    command->kind = ipc::CommandKind::kShutdown;
    command->clear_runs();
    command->id = ++command_counter;
    for (std::size_t i : remote) {
      if (!supervisor->ended(i)) (void)rings->try_send(i, *command);
    }
    processes->stop_all(options.shutdown_timeout);
  }
};

namespace {

// The coupled system's subsystems as the worker specifications of ProcessExecutor.
std::vector<ProcessWorkerSpec> worker_specs(const system::CoupledSystem& system,
                                            std::span<const library::ModelDescription> models,
                                            std::span<const double> u0) {
  const std::size_t n = system.subsystem_count();
  if (u0.size() != system.coupling_count()) {
    throw std::invalid_argument("ProcessExecutor: u0 has the wrong size");
  }
  if (models.size() != n) {
    throw std::invalid_argument("ProcessExecutor: one model description per subsystem required");
  }
  std::vector<ProcessWorkerSpec> specs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& sub = system.subsystem(i);
    specs[i].model = &models[i];
    specs[i].initial_inputs.resize(sub.input_size());
    system.gather_inputs(i, u0, specs[i].initial_inputs);
    specs[i].outputs = sub.output_size();
    specs[i].states = sub.state_size();
  }
  return specs;
}

}  // namespace

ProcessExecutor::ProcessExecutor(const system::CoupledSystem& system,
                                 std::span<const library::ModelDescription> models,
                                 std::span<const double> u0, const ProcessOptions& options)
    : ProcessExecutor(worker_specs(system, models, u0),
                      system.subsystem_count() > 0 ? system.subsystem(0).initial_time() : 0.0,
                      options) {}

ProcessExecutor::ProcessExecutor(std::span<const ProcessWorkerSpec> specs, double initial_time,
                                 const ProcessOptions& options)
    : Executor(options.rollback), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  const std::size_t n = specs.size();
  if (options.extra_runs + 1 > ipc::kMaxRuns) {
    throw std::invalid_argument(
        fmt::format("ProcessExecutor: at most {} extra runs", ipc::kMaxRuns - 1));
  }
  if (options.max_restarts > 0) {
    if (!options.rollback) {
      throw std::invalid_argument("ProcessExecutor: crash recovery (max_restarts) needs rollback");
    }
    s.recovery_dir = make_recovery_directory();
  }
  const pid_t master = getpid();
  std::vector<std::vector<std::byte>> configs;
  std::vector<std::size_t> state_sizes;
  s.workers.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ProcessWorkerSpec& spec = specs[i];
    if (spec.outputs > ipc::kMaxOutputs) {
      throw std::invalid_argument("ProcessExecutor: too many outputs for the reply");
    }
    s.workers[i].outputs = spec.outputs;
    worker::WorkerSetup setup;
    setup.model = spec.model;
    setup.initial_inputs = spec.initial_inputs;
    setup.solver = options.solver_for(i);
    setup.rollback = options.rollback;
    setup.jumps = options.jumps;
    if (i < options.cpusets.size()) setup.cpuset = options.cpusets[i];
    setup.extra_runs = options.extra_runs;
    setup.threads = options.threads;
    setup.index = static_cast<std::uint32_t>(i);
    setup.subsystems = static_cast<std::uint32_t>(n);
    setup.master_pid = master;
    if (!s.recovery_dir.empty()) {
      setup.recovery_path = s.recovery_path(i);
      setup.recovery_interval_ms = static_cast<std::uint32_t>(options.recovery_interval.count());
    }
    configs.push_back(worker::encode_config(setup));
    state_sizes.push_back(spec.states);
  }
  s.rings = std::make_unique<RingTransport>(configs, state_sizes, options.wait, master);
  s.transport = s.rings.get();
  s.processes = std::make_unique<ProcessSupervisor>(options.executable, n);
  s.supervisor = s.processes.get();
  for (std::size_t i = options.host_first_subsystem ? 1 : 0; i < n; ++i) s.remote.push_back(i);
  if (options.host_first_subsystem) {
    s.hosted_subsystem = library::build_subsystem(*specs[0].model);
    s.hosted = std::make_unique<runner::SubsystemRunner>(
        *s.hosted_subsystem, specs[0].initial_inputs, options.runner_options(0));
    if (options.threads != 1) {
      s.hosted_arena = std::make_unique<tbb::task_arena>(
          options.threads > 0 ? options.threads : static_cast<int>(tbb::task_arena::automatic));
    }
  }
  try {
    for (std::size_t i : s.remote) s.processes->start(i, s.rings->name(), s.rings->fd());
    s.await_handshakes(s.remote);
  } catch (...) {
    s.broken = true;
    s.terminate();
    s.remove_recovery_directory();
    throw;
  }
  // Every worker has attached: remove the name, so nothing is left behind from here on (a
  // restarted worker attaches through the descriptor).
  s.rings->unlink();
  if (!options.wait) {
    s.rings->set_wait_policy(master_wait_policy(s.remote.size() + 1, s.rings->run_cpus()));
  }
  s.defer_acks =
      worker::worker_wait_policy(n, options.extra_runs, s.rings->run_cpus()).spin_iterations == 0;
  s.accepted_time = initial_time;
  s.initial_time = s.accepted_time;
}

ProcessExecutor::~ProcessExecutor() {
  if (state_) {
    state_->terminate();
    state_->remove_recovery_directory();
  }
}

unsigned ProcessExecutor::recoveries() const {
  return state_->recoveries;
}

std::size_t ProcessExecutor::subsystem_count() const {
  return state_->workers.size();
}

void ProcessExecutor::restart_worker(std::size_t i) {
  State& s = *state_;
  if (i >= s.workers.size()) throw std::out_of_range("ProcessExecutor::restart_worker: index");
  if (!between_steps()) {
    throw std::logic_error("ProcessExecutor::restart_worker: accept() or reject() the step first");
  }
  if (s.broken) throw std::logic_error("ProcessExecutor::restart_worker: a worker has failed");
  if (s.hosted && i == 0) {
    throw std::logic_error("ProcessExecutor::restart_worker: subsystem 1 runs in the master");
  }
  s.drain();
  s.replace_processes({i});
}

void ProcessExecutor::do_step(double t_end, std::span<const SubsystemCommand> commands,
                              PassOutcome& outcome) {
  State& s = *state_;
  for (;;) {
    try {
      run_pass(t_end, commands, outcome);
      break;
    } catch (const WorkerFailure& failure) {
      if (!s.can_recover()) throw;
      s.recover_repeatedly(failure);  // every worker back at T_N: the pass is repeated
    }
  }
  if (!s.recovery_dir.empty()) {
    for (std::size_t i : s.remote) s.workers[i].pass_nominal = commands[i].nominal;
  }
}

void ProcessExecutor::run_pass(double t_end, std::span<const SubsystemCommand> commands,
                               PassOutcome& outcome) {
  State& s = *state_;
  const std::size_t n = s.workers.size();
  if (s.broken) throw std::logic_error("ProcessExecutor::step: a worker has failed");
  ++s.attempt;
  s.step_begin = s.accepted_time;
  s.step_op = {Operation::kStep, s.accepted_steps + 1, s.attempt, s.step_begin, t_end};
  auto& cmd = *s.command;
  cmd.kind = ipc::CommandKind::kStep;
  cmd.t_end = t_end;
  // All commands out first, then all replies: the subsystems integrate in parallel.
  const std::uint64_t first_id = s.command_counter + 1;  // subsystem i's command: first_id + i
  for (std::size_t i : s.remote) {
    const auto& c = commands[i];
    cmd.id = first_id + i;
    worker::pack_runs(cmd, c.nominal, c.extra);
    s.send(i, s.step_op);
  }
  s.command_counter = first_id + n - 1;
  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(n);
  s.ring();  // one wake-up for all the workers (and the accept / reject queued before)
  if (s.hosted) s.run_hosted(t_end, commands[0], outcome);
  s.await_replies(s.step_op);
  s.take_acks();  // the previous accept / reject, queued before this step in every ring
  const std::int64_t popped = ipc::monotonic_ns();
  std::int64_t slowest_sent = 0, slowest_comm = 0;
  for (std::size_t i : s.remote) {
    s.take(i, s.step_op, first_id + i);
    const auto& r = *s.reply;
    read_step_reply(r, i, s.workers[i].outputs, outcome);
    if (i == 0) s.step_time = r.time;
    if (r.sent_ns >= slowest_sent) {
      slowest_sent = r.sent_ns;
      // The worker handled the queued accept / reject before this command: not transport.
      const std::int64_t start = std::max(s.workers[i].sent_ns, s.workers[i].ack_sent_ns);
      slowest_comm = (popped - start) - (r.sent_ns - r.received_ns);
    }
  }
  outcome.communication_ns = std::max<std::int64_t>(0, slowest_comm);
  s.communication_ns += outcome.communication_ns;
}

void ProcessExecutor::do_evaluate_outputs(std::span<const std::vector<double>> inputs,
                                          EvaluationOutcome& outcome) {
  State& s = *state_;
  if (s.broken) throw std::logic_error("ProcessExecutor::evaluate_outputs: a worker has failed");
  for (bool repeat = false;;) {
    try {
      if (repeat) s.repeat_nominal_pass();
      s.evaluate_once(inputs, outcome);
      return;
    } catch (const WorkerFailure& failure) {
      if (!s.can_recover()) throw;
      s.recover_repeatedly(failure);  // every worker back at T_N: the pass first, then again
      repeat = true;
    }
  }
}

void ProcessExecutor::do_accept() {
  State& s = *state_;
  if (s.hosted) s.hosted->accept();
  ++s.accepted_steps;
  const Operation op{Operation::kAccept, s.accepted_steps, s.attempt, s.step_begin, s.step_time};
  // What a recovery needs first: the point the workers move to, and how they get there.
  if (!s.recovery_dir.empty()) {
    for (std::size_t i : s.remote) {
      auto& w = s.workers[i];
      w.since_saved.push_back({s.accepted_time, s.step_time, std::move(w.pass_nominal)});
    }
  }
  s.accepted_time = s.step_time;
  s.recovering([&] { s.broadcast(ipc::CommandKind::kAccept, op); });
}

void ProcessExecutor::do_reject() {
  State& s = *state_;
  if (s.hosted) s.hosted->reject();
  Operation op = s.step_op;
  op.kind = Operation::kReject;
  s.recovering([&] { s.broadcast(ipc::CommandKind::kReject, op); });
}

double ProcessExecutor::accepted_time() const {
  return state_->accepted_time;
}

void ProcessExecutor::do_accepted_state(std::size_t i, std::span<double> z) const {
  if (state_->hosted && i == 0) return state_->hosted->accepted_state(z);
  state_->recovering([this] { state_->drain(); });  // the worker writes the mirror at accept
  state_->transport->accepted_state(i, z);
}

ida::AdvanceStats ProcessExecutor::do_total_stats(std::size_t i) const {
  if (state_->hosted && i == 0) return state_->hosted->total_stats();
  if (!state_->broken) state_->recovering([this] { state_->drain(); });
  ida::AdvanceStats total = state_->workers.at(i).total_before;
  total += state_->workers[i].total;
  return total;
}

// Export and import are one command to one worker, answered before the call returns.
void ProcessExecutor::transfer_state(std::size_t i, ipc::CommandKind kind,
                                     const std::string& path) {
  State& s = *state_;
  if (s.broken) throw std::logic_error("ProcessExecutor: a worker has failed");
  s.recovering([&] { s.drain(); });
  const bool is_export = kind == ipc::CommandKind::kExport;
  const Operation op{is_export ? Operation::kExport : Operation::kImport, s.accepted_steps,
                     s.attempt, s.accepted_time, s.accepted_time};
  s.command->kind = kind;
  s.command->set_path(path);
  s.exchange(i, op);
  // The worker saved the imported state for recovery: no earlier step is repeated.
  if (!is_export) s.workers[i].since_saved.clear();
}

std::size_t ProcessExecutor::do_export_state(std::size_t i, const std::string& path) {
  if (state_->hosted && i == 0) return state_->hosted->export_state_to(path);
  transfer_state(i, ipc::CommandKind::kExport, path);
  return state_->reply->exported_bytes;
}

void ProcessExecutor::do_import_state(std::size_t i, const std::string& path) {
  if (state_->hosted && i == 0) {
    state_->hosted->import_state_from(path);
    state_->accepted_time = state_->hosted->accepted_time();
    return;
  }
  transfer_state(i, ipc::CommandKind::kImport, path);
  state_->accepted_time = state_->reply->time;
}

std::int64_t ProcessExecutor::do_snapshot_ns(std::size_t i) const {
  if (state_->hosted && i == 0) return state_->hosted->snapshot_ns();
  if (!state_->broken) state_->recovering([this] { state_->drain(); });
  return state_->workers.at(i).snapshot_ns_before + state_->workers[i].snapshot_ns;
}

const std::string& ProcessExecutor::segment_name() const {
  return state_->rings->name();
}

std::vector<pid_t> ProcessExecutor::worker_pids() const {
  std::vector<pid_t> pids;
  for (std::size_t i = 0; i < state_->workers.size(); ++i) {
    pids.push_back(state_->hosted && i == 0 ? getpid() : state_->supervisor->pid(i));
  }
  return pids;
}

std::int64_t ProcessExecutor::communication_ns() const {
  return state_->communication_ns;
}

}  // namespace macrostep::executors
