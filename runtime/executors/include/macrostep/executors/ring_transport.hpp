// RingTransport: the WorkerTransport of one machine (DESIGN.md contract 3). It owns the run's
// shared-memory segment (ipc/.../protocol.hpp gives the layout): per worker the command and
// reply rings, the progress counters, the state mirror, the Cap'n Proto configuration and the
// handshake, plus the run block and the shutdown notice. Its workers are processes that a
// ProcessSupervisor starts with name() and fd().
//
// Ring specifics behind the interface (worker_transport.hpp): commands are pushed quietly and
// the command bell of the run block is rung once by wake(); the master sleeps on the run block's
// reply counter, whose target send() raises (protocol.hpp, "Waking"). workers_attached() unlinks
// the segment's name: nothing is left in /dev/shm from then on whatever happens to the master,
// and fd() still lets a restarted worker attach. reset() constructs the rings of an ended
// worker anew; request_shutdown() writes the reason into the segment before the kShutdown
// commands; the destructor removes the segment.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "macrostep/executors/worker_transport.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::executors {

class RingTransport final : public WorkerTransport {
 public:
  // configs[i]: worker i's encoded SubsystemConfig; state_sizes[i]: its state size (the mirror).
  // policy: how the master waits (nullopt: WaitPolicy::adaptive(workers + 1, run CPUs)).
  // extra_runs: the extra runs per pass each worker is prepared for (with the run's CPUs it
  // decides whether idle workers sleep, worker::worker_wait_policy).
  // Throws ipc::SegmentError or std::invalid_argument; leaves nothing behind. First removes
  // this user's segments of dead owners created over a minute ago (ipc::remove_stale_segments),
  // naming each on stderr.
  // processes, threads: as in worker::worker_wait_policy (the processes that compute the
  // subsystems, 0: one each; the threads of their runs).
  RingTransport(std::span<const std::vector<std::byte>> configs,
                std::span<const std::size_t> state_sizes, std::optional<ipc::WaitPolicy> policy,
                pid_t master, unsigned extra_runs, std::size_t processes = 0, int threads = 0);
  ~RingTransport() override;
  RingTransport(const RingTransport&) = delete;
  RingTransport& operator=(const RingTransport&) = delete;

  std::size_t workers() const override { return blocks_.size(); }
  ipc::WaitStatus send(std::size_t i, const ipc::StepCommand& command,
                       std::chrono::milliseconds timeout) override;
  void wake() override;
  ipc::WaitStatus await_replies(std::chrono::milliseconds timeout) override;
  bool try_receive(std::size_t i, ipc::StepReply& reply) override;
  std::size_t replies_waiting(std::size_t i) const override;
  std::uint64_t progress(std::size_t i) const override;
  void accepted_state(std::size_t i, std::span<double> z) const override;
  std::size_t state_size(std::size_t i) const override { return state_sizes_.at(i); }

  std::optional<worker::HandshakeInfo> handshake(std::size_t i) const override;
  void workers_attached() override { segment_.unlink(); }
  bool idle_workers_sleep() const override { return idle_workers_sleep_; }
  void reset(std::span<const std::size_t> which) override;
  void request_shutdown(std::span<const std::size_t> which,
                        const std::string& reason) noexcept override;
  std::string name() const override { return segment_.name(); }

  // The segment's name and descriptor, which a worker process attaches through.
  const std::string& segment_name() const { return segment_.name(); }
  int fd() const { return segment_.fd(); }
  // How the master waits from now on (its owner knows how many processes really compete: e.g.
  // fewer workers than configurations when the master hosts a subsystem).
  void set_wait_policy(const ipc::WaitPolicy& policy) { policy_ = policy; }
  // The CPUs of the run (ipc::SegmentIdentity::run_cpus), which size the workers' wait policy.
  std::size_t run_cpus() const { return segment_.identity().run_cpus; }

 private:
  // Queues `command` if there is room, without waiting, and rings the bell.
  bool try_send(std::size_t i, const ipc::StepCommand& command);
  void write_shutdown(const std::string& reason) noexcept;

  ipc::SharedSegment segment_;
  ipc::RunBlock* run_ = nullptr;
  std::vector<ipc::SubsystemBlock*> blocks_;
  std::vector<std::size_t> state_sizes_;
  ipc::ConfigBlock* bye_ = nullptr;
  ipc::WaitPolicy policy_;
  bool idle_workers_sleep_ = false;
  std::unique_ptr<ipc::StepCommand> shutdown_command_ = std::make_unique<ipc::StepCommand>();
};

}  // namespace macrostep::executors
