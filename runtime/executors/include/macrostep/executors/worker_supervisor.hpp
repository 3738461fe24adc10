// Starting, watching and stopping the subsystem worker processes (DESIGN.md contract 5), apart
// from the transport of their messages (worker_transport.hpp) and from the executor logic.
//
// Liveness does not rest on waitpid(): ProcessSupervisor watches every worker through a pidfd,
// which works for any process of the user, also one that is not the master's child (a worker
// behind an MPI node agent); waitpid() only reaps its own children and reads their status. The
// executor adds the second, independent signal: the transport's progress counters (a live
// process that computes nothing for too long hangs).
//
// Call order: start(i) for every worker (after the transport exists: a worker attaches to it
// by itself), then the queries; start(i) again only once worker i has ended (or was killed) and
// the transport has been reset for it; stop_all() at the end. One thread drives a supervisor;
// no method may be called concurrently with another.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/executors/process_scheduling.hpp"

namespace macrostep::executors {

class WorkerSupervisor {
 public:
  virtual ~WorkerSupervisor() = default;

  virtual std::size_t workers() const = 0;
  // Starts the worker at index i, which attaches to the transport and builds its subsystem
  // from the configuration there. Throws std::runtime_error naming the subsystem if it cannot
  // start, or std::logic_error if worker i still runs.
  virtual void start(std::size_t i) = 0;
  // nullopt while worker i runs; once it has ended, how ("exited with status 3", "was killed by
  // signal 9 (Killed)"; "has ended" if its status is not ours to read).
  virtual std::optional<std::string> ended(std::size_t i) = 0;
  // SIGKILL, and reap it if it is a child. No-op for a worker that has ended.
  virtual void kill(std::size_t i) noexcept = 0;
  virtual pid_t pid(std::size_t i) const = 0;
  // Waits up to `grace` for every worker to end (after they were asked to), then kills the rest.
  virtual void stop_all(std::chrono::milliseconds grace) noexcept = 0;
  // The workers that share worker i's process, i included, ascending: start(), ended(), kill()
  // and pid() of one of them are those of the process, so a crash or a kill ends all of them,
  // and replacing one means replacing all. Default: i alone.
  virtual std::vector<std::size_t> process_mates(std::size_t i) const { return {i}; }
  // How worker i's process has been scheduled so far (process_scheduling.hpp), for telling a
  // hung worker from one the machine gives no CPU; nullopt where this supervisor cannot see it
  // (the default) or the process has ended.
  virtual std::optional<SchedulingSample> scheduling(std::size_t) const { return std::nullopt; }
};

// Worker processes spawned from a `macrostep` binary on this machine, attached to a
// RingTransport's segment: `EXE worker --segment NAME --segment-fd 3 --index I`, with
// segment_fd duplicated to descriptor 3 of the child (so that it can attach after the name is
// gone). A group of workers shares one process (`--index I --index J ...`, worker::run_worker):
// start(i) of its first member spawns it, start(j) of the others while it runs only notes them.
class ProcessSupervisor final : public WorkerSupervisor {
 public:
  // groups: lists of worker indices (< workers, each in at most one list) that share a process;
  // a worker in no list has a process of its own. Throws std::invalid_argument otherwise.
  ProcessSupervisor(std::string executable, std::size_t workers, std::string segment_name,
                    int segment_fd, const std::vector<std::vector<std::size_t>>& groups = {});
  ~ProcessSupervisor() override;  // kills and reaps what still runs
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  std::size_t workers() const override { return slot_of_.size(); }
  void start(std::size_t i) override;
  std::optional<std::string> ended(std::size_t i) override;
  void kill(std::size_t i) noexcept override;
  pid_t pid(std::size_t i) const override { return procs_.at(slot_of_.at(i)).pid; }
  void stop_all(std::chrono::milliseconds grace) noexcept override;
  std::vector<std::size_t> process_mates(std::size_t i) const override {
    return members_.at(slot_of_.at(i));
  }
  std::optional<SchedulingSample> scheduling(std::size_t i) const override {
    return read_scheduling(pid(i));
  }

 private:
  struct Proc {
    pid_t pid = 0;
    int pidfd = -1;  // -1 if pidfd_open is unavailable: then kill(pid, 0) and /proc decide
    bool ended = false;
    std::string how;
  };
  void close_pidfd(Proc& p) noexcept;
  void spawn(std::size_t slot);

  std::string executable_;
  std::vector<Proc> procs_;                        // per process slot
  std::vector<std::vector<std::size_t>> members_;  // per slot: its workers, ascending
  std::vector<std::size_t> slot_of_;               // per worker
  std::vector<bool> started_;  // per worker: start() was called for the slot's running process
  std::string segment_name_;
  int segment_fd_;
};

}  // namespace macrostep::executors
