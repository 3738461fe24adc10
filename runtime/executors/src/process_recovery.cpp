// Crash recovery of a ProcessExecutor (ProcessOptions::max_restarts; process_state.hpp): every
// worker is replaced, imports its last saved accepted state and repeats the accepted steps
// since, so that the run continues bit-identically (DESIGN.md contracts 2 and 5).
#include <fmt/format.h>

#include <filesystem>

#include "macrostep/worker/wire.hpp"
#include "process_state.hpp"

namespace macrostep::executors {

// After a recovery during an output evaluation every worker stands at T_N: the last pass's
// nominal runs again (a pure function of the T_N state and the polynomial, contract 2: the
// same end states; the extra runs are not needed for an evaluation), so that the evaluation
// can be repeated. Throws WorkerFailure like a pass.
void ProcessExecutor::State::repeat_nominal_pass() {
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

// Replaces every worker process after `failure` and brings each to the accepted state at
// accepted_time, with nothing queued or owed (ProcessOptions::max_restarts). A failure of a
// new worker meanwhile throws (WorkerFailure: the caller may recover again).
void ProcessExecutor::State::recover(const WorkerFailure& failure) {
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

void ProcessExecutor::State::tell_recovery(const std::string& what) const {
  if (options.on_recovery) options.on_recovery(what);
}

// Ends the processes of `asked` and their mates (if they still run), forgets the replies they
// owed, empties their rings and starts new ones, which attach through the inherited segment
// descriptor and rebuild their subsystems at T_0. Throws std::runtime_error (and marks the executor
// broken) if one does not start.
void ProcessExecutor::State::replace_processes(const std::vector<std::size_t>& asked) {
  // A process is replaced with every subsystem it hosts.
  const std::vector<std::size_t> which = with_mates(asked);
  for (std::size_t i : which) supervisor->kill(i);
  transport->reset(which);  // only the ended workers owed replies
  for (std::size_t i : which) {
    workers[i].owed = 0;
    workers[i].progress_known = false;
  }
  try {
    for (std::size_t i : which) supervisor->start(i);
    await_handshakes(which);
  } catch (...) {
    broken = true;
    throw;
  }
}

// A new worker i at T_0: imports its recovery file, then repeats the accepted steps since
// the state in it (their nominal runs and accepts, each a pure function of the state and the
// inputs: the same bits as the first time).
void ProcessExecutor::State::restore(std::size_t i) {
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

// recover() from `failure`, again while a new worker fails during it and recoveries are left
// (each attempt names the failure it recovers from, not the one of the attempt before).
void ProcessExecutor::State::recover_repeatedly(const WorkerFailure& failure) {
  for (;;) {
    try {
      recover(failure);
      return;
    } catch (const WorkerFailure&) {
      if (!can_recover()) throw;
    }
  }
}

void ProcessExecutor::State::remove_recovery_directory() noexcept {
  if (recovery_dir.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(recovery_dir, ignored);
}

}  // namespace macrostep::executors
