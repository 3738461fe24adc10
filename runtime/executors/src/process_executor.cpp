// Process executor (process_executor.hpp; DESIGN.md data flow, contracts 1, 3, 5): construction,
// stepping and queries. The executor talks to its workers through a WorkerTransport and a
// WorkerSupervisor only; watching them is in process_watch.cpp, crash recovery in
// process_recovery.cpp.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "macrostep/executors/worker_replies.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/wire.hpp"
#include "process_state.hpp"

namespace macrostep::executors {

// Subsystem 0 of `spec` in this process (ProcessOptions::host_first_subsystem).
void ProcessExecutor::State::host(const ProcessWorkerSpec& spec) {
  hosted_subsystem = library::build_subsystem(*spec.model);
  hosted = std::make_unique<runner::SubsystemRunner>(*hosted_subsystem, spec.initial_inputs,
                                                     options.runner_options(0));
  if (options.threads != 1) {
    hosted_arena = std::make_unique<tbb::task_arena>(
        options.threads > 0 ? options.threads : static_cast<int>(tbb::task_arena::automatic));
  }
}

void ProcessExecutor::State::send(std::size_t i, const Operation& op) {
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

// Takes worker i's next reply into *reply (after await_replies()).
void ProcessExecutor::State::take(std::size_t i, const Operation& during, std::uint64_t expected) {
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
void ProcessExecutor::State::broadcast(ipc::CommandKind kind, const Operation& op) {
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
void ProcessExecutor::State::drain() {
  if (pending_ack == 0) return;
  await_replies(pending_op);
  take_acks();
}

// Takes the acknowledgements of the last accept / reject, which have come in (await_replies).
void ProcessExecutor::State::take_acks() {
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

// Subsystem 0's pass in this process (host_first_subsystem), while the workers integrate.
void ProcessExecutor::State::run_hosted(double t_end, const SubsystemCommand& c,
                                        PassOutcome& outcome) {
  runner::SubsystemRunner& h = *hosted;
  h.prepare(t_end, c.nominal, c.extra);
  h.run_all(hosted_arena.get());
  collect_runner_outcome(h, 0, outcome);
  step_time = h.time();
}

// One output evaluation (ProcessExecutor::evaluate_outputs) without recovery: a kEvaluate to
// every remote subsystem asked, the hosted one evaluated here meanwhile, then the replies in
// subsystem order (the lowest failure is reported, as in a pass).
void ProcessExecutor::State::evaluate_once(std::span<const std::vector<double>> inputs,
                                           runner::EventSide side, EvaluationOutcome& outcome) {
  const std::size_t n = workers.size();
  const Operation op{Operation::kEvaluate, accepted_steps + 1, attempt, step_begin, step_op.end};
  const std::uint64_t first_id = command_counter + 1;  // subsystem i's command: first_id + i
  command->kind = ipc::CommandKind::kEvaluate;
  command->after_event = side == runner::EventSide::kAfter ? 1 : 0;
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
  if (hosted && !inputs[0].empty()) evaluate_with_runner(*hosted, 0, inputs[0], side, outcome);
  await_replies(op);
  for (std::size_t i : remote) {
    if (inputs[i].empty()) continue;
    take(i, op, first_id + i);
    read_evaluation_reply(*reply, i, workers[i].outputs, outcome);
  }
}

// One command (already in *command) to worker i alone, answered before it returns; throws
// std::runtime_error with the worker's reason if it fails.
void ProcessExecutor::State::exchange(std::size_t i, const Operation& op) {
  command->id = ++command_counter;
  send(i, op);
  await_replies(op);
  take(i, op, command->id);
  if (reply->status != ipc::ReplyStatus::kOk) {
    throw std::runtime_error(fmt::format("subsystem {}: {}", number(i), reply->error));
  }
}

void ProcessExecutor::State::terminate() noexcept {
  if (!transport || !supervisor) return;
  // Ask politely (a worker busy with a command replies to it first), then kill.
  try {
    std::vector<std::size_t> live;
    for (std::size_t i : remote) {
      if (!supervisor->ended(i)) live.push_back(i);
    }
    transport->request_shutdown(live, broken ? "the run failed" : worker::kNormalShutdown);
  } catch (...) {
    // Without the request the workers are killed after the grace below.
  }
  supervisor->stop_all(options.shutdown_timeout);
}

ProcessExecutor::ProcessExecutor(const system::CoupledSystem& system,
                                 std::span<const library::ModelDescription> models,
                                 std::span<const double> u0, const ProcessOptions& options)
    : ProcessExecutor(worker_specs(system, models, u0),
                      system.subsystem_count() > 0 ? system.subsystem(0).initial_time() : 0.0,
                      options) {}

ProcessExecutor::ProcessExecutor(std::span<const ProcessWorkerSpec> specs, double initial_time,
                                 const ProcessOptions& options)
    : ProcessExecutor(make_ring_workers(specs, options), specs, initial_time, options) {}

ProcessExecutor::ProcessExecutor(WorkerParts parts, std::span<const ProcessWorkerSpec> specs,
                                 double initial_time, const ProcessOptions& options)
    : Executor(options.rollback), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  s.transport = std::move(parts.transport);
  s.supervisor = std::move(parts.supervisor);
  s.recovery_dir = std::move(parts.recovery_dir);
  const std::size_t n = specs.size();
  try {
    check_process_options(specs, options);
    if (!s.transport || !s.supervisor || s.transport->workers() != n ||
        s.supervisor->workers() != n) {
      throw std::invalid_argument(
          "ProcessExecutor: a transport and a supervisor of one worker per specification");
    }
    s.workers.resize(n);
    for (std::size_t i = 0; i < n; ++i) s.workers[i].outputs = specs[i].outputs;
    for (std::size_t i = options.host_first_subsystem ? 1 : 0; i < n; ++i) s.remote.push_back(i);
    if (options.host_first_subsystem && n > 0) s.host(specs[0]);
    for (std::size_t i : s.remote) s.supervisor->start(i);
    s.await_handshakes(s.remote);
  } catch (...) {
    s.broken = true;
    s.terminate();
    s.remove_recovery_directory();
    throw;
  }
  // Every worker has attached: nothing is left behind from here on (a restarted worker still
  // attaches).
  s.transport->workers_attached();
  s.defer_acks = s.transport->idle_workers_sleep();
  s.accepted_time = initial_time;
  s.initial_time = initial_time;
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
                                          runner::EventSide side, EvaluationOutcome& outcome) {
  State& s = *state_;
  if (s.broken) throw std::logic_error("ProcessExecutor::evaluate_outputs: a worker has failed");
  for (bool repeat = false;;) {
    try {
      if (repeat) s.repeat_nominal_pass();
      s.evaluate_once(inputs, side, outcome);
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

std::string ProcessExecutor::segment_name() const {
  return state_->transport->name();
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
