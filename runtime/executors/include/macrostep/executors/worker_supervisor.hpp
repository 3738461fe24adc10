// Starting, watching and stopping the subsystem worker processes (DESIGN.md contract 5), apart
// from the transport of their messages (worker_transport.hpp) and from the executor logic.
//
// Liveness does not rest on waitpid(): ProcessSupervisor watches every worker through a pidfd,
// which works for any process of the user, also one that is not the master's child (a worker
// behind an MPI node agent); waitpid() only reaps its own children and reads their status. The
// executor adds the second, independent signal: the transport's progress counters (a live
// process that computes nothing for too long hangs).
//
// One thread drives a supervisor. Restarting an index whose process has ended is allowed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace macrostep::executors {

class WorkerSupervisor {
 public:
  virtual ~WorkerSupervisor() = default;

  virtual std::size_t workers() const = 0;
  // nullopt while worker i runs; once it has ended, how ("exited with status 3", "was killed by
  // signal 9 (Killed)"; "has ended" if its status is not ours to read).
  virtual std::optional<std::string> ended(std::size_t i) = 0;
  // SIGKILL, and reap it if it is a child. No-op for a worker that has ended.
  virtual void kill(std::size_t i) noexcept = 0;
  virtual pid_t pid(std::size_t i) const = 0;
  // Waits up to `grace` for every worker to end (after they were asked to), then kills the rest.
  virtual void stop_all(std::chrono::milliseconds grace) noexcept = 0;
};

// Worker processes spawned from a `macrostep` binary on this machine.
class ProcessSupervisor final : public WorkerSupervisor {
 public:
  ProcessSupervisor(std::string executable, std::size_t workers);
  ~ProcessSupervisor() override;  // kills and reaps what still runs
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts worker i: `EXE worker --segment NAME --segment-fd 3 --index I`, with segment_fd
  // duplicated to descriptor 3 of the child (so that it can attach after the name is gone).
  // Throws std::runtime_error naming the subsystem if it cannot start, or std::logic_error if
  // worker i still runs.
  void start(std::size_t i, const std::string& segment_name, int segment_fd);

  std::size_t workers() const override { return procs_.size(); }
  std::optional<std::string> ended(std::size_t i) override;
  void kill(std::size_t i) noexcept override;
  pid_t pid(std::size_t i) const override { return procs_.at(i).pid; }
  void stop_all(std::chrono::milliseconds grace) noexcept override;

 private:
  struct Proc {
    pid_t pid = 0;
    int pidfd = -1;  // -1 if pidfd_open is unavailable: then kill(pid, 0) and /proc decide
    bool ended = false;
    std::string how;
  };
  void close_pidfd(Proc& p) noexcept;

  std::string executable_;
  std::vector<Proc> procs_;
};

}  // namespace macrostep::executors
