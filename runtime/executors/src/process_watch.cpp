// Watching the workers of a ProcessExecutor (process_state.hpp): a worker that has ended, one
// that hangs (its progress counters stand still), and handshakes at start; the failure messages
// name the subsystem and the operation (DESIGN.md contract 5).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <thread>

#include "process_state.hpp"

namespace macrostep::executors {

namespace process_detail {

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

double resume_time(const Operation& op) {
  return op.kind == Operation::kStep || op.kind == Operation::kReject ||
                 op.kind == Operation::kEvaluate
             ? op.begin
             : op.end;
}

}  // namespace process_detail

std::string ProcessExecutor::State::who(std::size_t i) const {
  const std::vector<std::size_t> mates = supervisor->process_mates(i);
  if (mates.size() <= 1) return fmt::format("subsystem {} (pid {})", number(i), supervisor->pid(i));
  std::string names;
  for (std::size_t m : mates) names += fmt::format("{}{}", names.empty() ? "" : ", ", number(m));
  return fmt::format("subsystems {} (one worker process, pid {})", names, supervisor->pid(i));
}

std::vector<std::size_t> ProcessExecutor::State::with_mates(
    const std::vector<std::size_t>& which) const {
  std::vector<std::size_t> all;
  for (std::size_t i : which) {
    for (std::size_t m : supervisor->process_mates(i)) all.push_back(m);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

namespace {

// A worker ends by itself only after the master's shutdown (status 0), orphaned (3) or on a bad
// segment or configuration (4, which it explains on stderr): an exit in the middle of the run
// with another status, or with 0, is a model or a library in it that called exit().
std::string exit_cause(const std::string& how) {
  constexpr std::string_view kExited = "exited with status ";
  if (how.rfind(kExited, 0) != 0 || how == "exited with status 3" ||
      how == "exited with status 4") {
    return "";
  }
  return " (a model or a library in the worker called exit())";
}

}  // namespace

void ProcessExecutor::State::fail_dead(std::size_t i, const std::string& how,
                                       const Operation& during) {
  broken = true;
  throw WorkerFailure(
      fmt::format("{} {}{} during {}", who(i), how, exit_cause(how), describe(during)), i,
      accepted_steps + 1, resume_time(during));
}

// Throws WorkerFailure if worker i's progress has not moved for hang_timeout since it last did
// (or since the first check after its command); a hung worker is killed (it would not answer
// the shutdown). The progress of a process that hosts several subsystems is the sum over them:
// one that waits while its mates compute (their runs one after the other) does not hang. Nor
// does one the machine gave no CPU (an oversubscribed run): it gets another hang_timeout, up to
// kCpuWaitLimit in all, so that a run on a starved machine is slow rather than killed.
void ProcessExecutor::State::check_progress(std::size_t i, const Operation& during) {
  Worker& w = workers[i];
  std::uint64_t now_seen = 0;
  for (std::size_t m : supervisor->process_mates(i)) now_seen += transport->progress(m);
  const auto now = Clock::now();
  if (!w.progress_known || now_seen != w.progress_seen) {
    w.progress_known = true;
    w.progress_seen = now_seen;
    w.progress_at = now;
    w.allowed = options.hang_timeout;
    w.window_at = now;
    w.window_start.reset();  // taken when the worker has been still for half a timeout
    return;
  }
  if (options.hang_timeout.count() <= 0) return;
  const auto still = now - w.progress_at;
  // A scheduling window says something once it spans half a timeout.
  const auto window_wide = [&] { return 2 * (now - w.window_at) >= options.hang_timeout; };
  if (!w.window_start && window_wide()) {
    w.window_start = supervisor->scheduling(i);
    w.window_at = now;
  }
  if (still < w.allowed) return;
  // A window shorter than half a timeout tells nothing (the master's own checks came late: it
  // was short of CPU too); the next checks widen it and decide.
  if (w.window_start && !window_wide()) return;
  const auto sample = supervisor->scheduling(i);
  if (w.window_start && sample && waited_for_cpu(*w.window_start, *sample, now - w.window_at) &&
      w.allowed < kCpuWaitLimit * options.hang_timeout) {
    if (w.allowed == options.hang_timeout && options.on_cpu_wait) {
      options.on_cpu_wait(fmt::format(
          "{} evaluated nothing for {:.1f} s during {} because it waited for a CPU (more busy "
          "processes than cores); it gets up to {:g} s before it is taken for hung",
          who(i), std::chrono::duration<double>(still).count(), describe(during),
          std::chrono::duration<double>(kCpuWaitLimit * options.hang_timeout).count()));
    }
    w.allowed += options.hang_timeout;
    w.window_start = sample;
    w.window_at = now;
    return;
  }
  broken = true;
  const double idle = std::chrono::duration<double>(still).count();
  const std::string name = who(i);
  supervisor->kill(i);
  throw WorkerFailure(
      fmt::format("{} hangs: no model evaluation for {:.1f} s (--hang-timeout "
                  "{:g} s{}) during {}; it was killed",
                  name, idle, std::chrono::duration<double>(options.hang_timeout).count(),
                  w.allowed > options.hang_timeout ? ", extended while it waited for a CPU" : "",
                  describe(during)),
      i, accepted_steps + 1, resume_time(during));
}

// Waits until every command sent has its reply; throws WorkerFailure if a worker ends, or one
// that still owes a reply hangs, first.
void ProcessExecutor::State::await_replies(const Operation& during) {
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

// Waits until every worker in `which` has written its handshake; throws std::runtime_error
// naming the first that fails to start, exits or times out.
void ProcessExecutor::State::await_handshakes(const std::vector<std::size_t>& which) {
  const auto deadline = Clock::now() + options.handshake_timeout;
  for (std::size_t i : which) {
    for (;;) {
      if (const auto hs = transport->handshake(i)) {
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

void ProcessExecutor::State::check_handshake(std::size_t i, const worker::HandshakeInfo& hs) const {
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

}  // namespace macrostep::executors
