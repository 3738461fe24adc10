// The subsystem process (`macrostep worker --segment NAME --index I [--index J ...]`, DESIGN.md
// data flow: one subsystem, or a group of them) and the Cap'n Proto configuration the master
// hands it (ipc/schema/control.capnp).
//
// Master side: encode_config() serializes a subsystem's configuration; ipc::write_message() puts it
// into the subsystem's region before the worker is spawned.
// Worker side: run_worker() attaches to the segment (by name, or through an inherited descriptor),
// checks the master, pins itself, rebuilds its model bit-identically from the configuration, writes
// the handshake and serves commands until kShutdown (exit status 0) or until the master is gone
// (non-zero). It never creates or removes a segment.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/wait.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/runner/subsystem_runner.hpp"

namespace macrostep::ipc {
class SharedSegment;
}

namespace macrostep::worker {

// What the master knows about one subsystem process. `model` is referenced during encoding.
struct WorkerSetup {
  const library::ModelDescription* model = nullptr;
  std::vector<double> initial_inputs;  // inputs at t0
  ida::IntegratorOptions solver;
  bool rollback = true;
  runner::JumpOptions jumps;     // the runs' handling of input jumps at T_N
  double output_interval = 0.0;  // runner::RunnerOptions::output_interval
  std::vector<unsigned> cpuset;  // PUs to pin to; empty: unpinned
  unsigned extra_runs = 0;       // extra runs per step (capacity hint)
  int threads = 0;               // TBB arena of the worker's runs; 0: default
  std::uint32_t index = 0, subsystems = 0;
  // The processes that compute the run's subsystems (worker processes, and the master if it
  // hosts one): fewer than `subsystems` when workers host groups; 0: one per subsystem.
  std::uint32_t processes = 0;
  pid_t master_pid = 0;
  // Crash recovery: after an import, and after an accept once recovery_interval_ms have passed
  // since it last did, the worker writes its accepted state T_N here (SubsystemRunner::
  // export_state_to, not synced: it has to outlive the process, not the machine) and says so in
  // the reply (exported_bytes > 0), so that a new process for this subsystem can import it and
  // the master knows which accepted steps to repeat after it. Empty: never.
  std::string recovery_path;
  std::uint32_t recovery_interval_ms = 1000;
};

// The serialized SubsystemConfig (Cap'n Proto flat array, whole words).
std::vector<std::byte> encode_config(const WorkerSetup& setup);

// A decoded configuration: the rebuilt model and the worker's options.
struct DecodedConfig {
  // The received description (it holds only what this subsystem needs, e.g. a chain segment's
  // own parameters) and the subsystem built from it, equal state for state and output for output
  // to the master's.
  library::ModelDescription model;
  std::unique_ptr<model::Subsystem> subsystem;
  std::vector<double> initial_inputs;
  ida::IntegratorOptions solver;
  bool rollback = true;
  runner::JumpOptions jumps;
  double output_interval = 0.0;
  std::vector<unsigned> cpuset;
  unsigned extra_runs = 0;
  int threads = 0;
  std::uint32_t index = 0, subsystems = 0, protocol_version = 0;
  std::uint32_t processes = 0;  // WorkerSetup::processes
  pid_t master_pid = 0;
  std::string recovery_path;
  std::uint32_t recovery_interval_ms = 1000;
};
// Throws std::runtime_error on a malformed message or a protocol version mismatch.
DecodedConfig decode_config(const std::byte* data, std::size_t bytes);

// The handshake a worker writes into "ms.hs.I" once it is ready (or has failed to start).
struct HandshakeInfo {
  bool ready = false;
  std::string error;  // why not ready
  pid_t pid = 0;
  std::uint32_t protocol_version = 0, layout_version = 0;
  std::uint64_t state_size = 0;
};
std::vector<std::byte> encode_handshake(const HandshakeInfo& info);
HandshakeInfo decode_handshake(const std::byte* data, std::size_t bytes);

// The Shutdown message the master writes into "ms.bye" before it sends kShutdown: why the run
// ends ("end of run", or the failure that ended it).
std::vector<std::byte> encode_shutdown(const std::string& reason);
std::string decode_shutdown(const std::byte* data, std::size_t bytes);
inline constexpr std::size_t kShutdownRegionBytes = 1024;
inline constexpr const char* kNormalShutdown = "end of run";

// How a worker waits for its next command: awake for longer than the master's turnaround between
// two steps (a short spin, then sched_yield() calls, then sleep) when the runs of all `subsystems`
// (1 + extra_runs each) fit on the run's CPUs, else sleeping at once on the command bell
// (worker.cpp says why). The master
// asks it too, to know whether a queued command reaches a worker without ringing the bell.
ipc::WaitPolicy worker_wait_policy(std::size_t subsystems, unsigned extra_runs,
                                   std::size_t run_cpus) noexcept;
// The same for `processes` processes computing the subsystems (WorkerSetup::processes; 0 or
// `subsystems`: one each) with `threads` threads for their runs (0: the run's CPUs): with
// groups the runs that compute at once are, per process, its group's runs up to its threads.
ipc::WaitPolicy worker_wait_policy(std::size_t subsystems, unsigned extra_runs,
                                   std::size_t run_cpus, std::size_t processes,
                                   int threads) noexcept;

// A worker's handling of its commands, apart from how they reach it: a SubsystemRunner (the
// same one the in-process executor drives) built from the decoded configuration, fed from
// commands, its results written into replies by the one encoder (wire.hpp), its accepted state
// published into `mirror` (state_size() doubles) before it answers an accept or an import, its
// integrators bumping `progress` (ipc::kMaxRuns counters) while they compute. run_worker() serves
// the ring of its segment with it; another WorkerTransport serves it the same way. One thread
// calls handle(); mirror and progress must outlive the handler.
class CommandHandler {
 public:
  // Builds the runner at the configuration's initial state and publishes that state; the runs
  // of a step go to an arena of its own of DecodedConfig::threads threads (1: none, in the
  // calling thread). Throws what building the runner throws (std::invalid_argument,
  // ida::IntegrationError).
  CommandHandler(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress);
  // The same with the runs on `arena`, which the caller owns and keeps alive for the handler's
  // lifetime (nullptr: in the calling thread); the handlers of one HandlerGroup share one.
  CommandHandler(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress,
                 tbb::task_arena* arena);
  ~CommandHandler();
  CommandHandler(const CommandHandler&) = delete;
  CommandHandler& operator=(const CommandHandler&) = delete;

  // Answers `command` in `reply` (its id, status, results, the worker's counters); never throws:
  // a failure is a kFailed reply with the reason. A kShutdown is answered like any command.
  void handle(const ipc::StepCommand& command, ipc::StepReply& reply);

  std::uint32_t index() const { return config_.index; }
  std::size_t state_size() const { return config_.subsystem->state_size(); }

 private:
  friend class HandlerGroup;
  void start_reply(const ipc::StepCommand& cmd, ipc::StepReply& reply) const;
  void end_reply(ipc::StepReply& reply) const;
  void prepare_step(const ipc::StepCommand& cmd);
  void finish_step(ipc::StepReply& reply);
  void evaluate(const ipc::StepCommand& cmd, ipc::StepReply& reply);
  void keep_for_recovery(ipc::StepReply& reply, bool now);
  void write_mirror();

  DecodedConfig config_;
  double* mirror_;
  runner::SubsystemRunner runner_;
  std::unique_ptr<tbb::task_arena> own_arena_;
  tbb::task_arena* arena_ = nullptr;             // own_arena_ or the caller's
  std::int64_t saved_ns_ = ipc::monotonic_ns();  // when the recovery file was last written
  model::SupportPoints nominal_;                 // the current command's runs, unpacked
  std::vector<runner::ExtraRun> extra_;
};

// The subsystems one worker process hosts (a group, ProcessOptions::groups on the master's
// side): a CommandHandler per subsystem, all with their runs on one arena of the process. The
// step commands that arrive together are answered together: their runs are the tasks of one
// runner::run_prepared() on that arena (as in the in-process executor), or one after the other
// in the calling thread without an arena (threads = 1). Every member's results are those of a
// process of its own: a run depends on its runner alone (contract 1).
// One thread drives a group; add() all members before the first handle().
class HandlerGroup {
 public:
  // threads: the arena of the group's runs (0: default, 1: none, the calling thread).
  explicit HandlerGroup(int threads);
  ~HandlerGroup();
  HandlerGroup(const HandlerGroup&) = delete;
  HandlerGroup& operator=(const HandlerGroup&) = delete;

  // A member built from `config` (CommandHandler's constructor; same exceptions).
  void add(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress);
  std::size_t size() const { return members_.size(); }
  CommandHandler& member(std::size_t k) { return *members_.at(k); }

  // Answers commands[k] in *replies[k] for every member k with commands[k] != nullptr (both
  // spans of size()): the step commands' runs together, every other command by its member's
  // handle() first, in member order. Never throws (a failure is that member's kFailed reply).
  void handle(std::span<const ipc::StepCommand* const> commands,
              std::span<ipc::StepReply* const> replies);

 private:
  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<std::unique_ptr<CommandHandler>> members_;
  std::vector<runner::SubsystemRunner*> stepping_;          // this call's steps
  std::vector<std::size_t> stepping_members_;               // their members
  std::vector<std::pair<std::size_t, std::size_t>> tasks_;  // run_prepared()'s scratch
};

// The worker's main(): returns the process exit status (0 after kShutdown; 3 orphaned;
// 4 bad segment or configuration). Messages go to stderr, naming the subsystems (1-based).
// segment_fd >= 0: attach through that inherited descriptor (it is closed afterwards) instead
// of by name, so that a worker started after the master unlinked the name can attach.
// `indices`: the subsystems this process hosts (0-based, distinct; one, or a group served by a
// HandlerGroup that waits on the command bell for a command in any of their rings, pinned to
// the union of their PU lists). It ends after a kShutdown to every one of them.
int run_worker(const std::string& segment_name, std::span<const std::size_t> indices,
               int segment_fd = -1);
inline int run_worker(const std::string& segment_name, std::size_t index, int segment_fd = -1) {
  return run_worker(segment_name, std::span<const std::size_t>(&index, 1), segment_fd);
}

}  // namespace macrostep::worker
