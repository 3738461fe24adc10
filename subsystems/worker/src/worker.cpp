// The subsystem process (worker.hpp; DESIGN.md data flow). Its runs are those of a
// runner::SubsystemRunner, which the in-process executor uses too: results are bit-identical
// (contract 1).
#include "macrostep/worker/worker.hpp"

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <tbb/task_arena.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/runner/subsystem_runner.hpp"
#include "macrostep/worker/wire.hpp"

namespace macrostep::worker {

CommandHandler::CommandHandler(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress)
    : config_(std::move(config)),
      mirror_(mirror),
      runner_(*config_.subsystem, config_.initial_inputs,
              runner::RunnerOptions{config_.solver, config_.rollback, config_.jumps,
                                    config_.output_interval}) {
  runner_.set_progress_counters([progress](std::size_t k) -> std::atomic<std::uint64_t>* {
    return k < ipc::kMaxRuns ? &progress[k].value : nullptr;
  });
  if (config_.threads != 1) {
    arena_ = std::make_unique<tbb::task_arena>(
        config_.threads > 0 ? config_.threads : static_cast<int>(tbb::task_arena::automatic));
  }
  write_mirror();
}

CommandHandler::~CommandHandler() = default;

void CommandHandler::handle(const ipc::StepCommand& cmd, ipc::StepReply& reply) {
  reply.status = ipc::ReplyStatus::kOk;
  reply.failed_run = 0;
  reply.error[0] = '\0';
  reply.id = cmd.id;
  reply.runs = 0;
  reply.feedthrough = 0;
  reply.samples = 0;
  reply.exported_bytes = 0;
  reply.solver_ns = reply.extra_ns = 0;
  try {
    switch (cmd.kind) {
      case ipc::CommandKind::kStep:
        step(cmd, reply);
        break;
      case ipc::CommandKind::kAccept:
        runner_.accept();
        write_mirror();
        keep_for_recovery(reply, /*now=*/false);
        break;
      case ipc::CommandKind::kReject:
        runner_.reject();
        break;
      case ipc::CommandKind::kExport:
        reply.exported_bytes = runner_.export_state_to(cmd.path());
        break;
      case ipc::CommandKind::kImport:
        runner_.import_state_from(cmd.path());
        write_mirror();
        keep_for_recovery(reply, /*now=*/true);
        break;
      case ipc::CommandKind::kEvaluate:
        evaluate(cmd, reply);
        break;
      case ipc::CommandKind::kShutdown:
        break;
      default:
        throw std::runtime_error("unknown command kind " +
                                 std::to_string(static_cast<unsigned>(cmd.kind)));
    }
  } catch (const std::exception& e) {
    reply.set_failure(0, e.what());
  }
  reply.time = runner_.time();
  reply.snapshot_ns_total = runner_.snapshot_ns();
  set_total_stats(reply, runner_.total_stats());
}

void CommandHandler::step(const ipc::StepCommand& cmd, ipc::StepReply& reply) {
  unpack_runs(cmd, nominal_, extra_);
  runner_.prepare(cmd.t_end, nominal_, extra_);
  runner_.run_all(arena_.get());
  encode_pass(runner_.result(0), runner_.extra_results(), config_.subsystem->output_size(),
              runner_.nominal_ns(), runner_.extra_ns(), reply);
  if (const std::string failure = runner_.failure(); !failure.empty()) {
    reply.set_failure(static_cast<std::uint32_t>(runner_.failed_run()), failure,
                      runner_.terminated());
  }
}

// The runner's output evaluation (the in-process executor calls the same function).
void CommandHandler::evaluate(const ipc::StepCommand& cmd, ipc::StepReply& reply) {
  const runner::RunResult& r = runner_.evaluate_outputs(cmd.inputs());
  encode_evaluation(r.outputs, r.feedthrough, r.error, reply);
}

// The accepted state where a restarted process for this subsystem finds it (WorkerSetup::
// recovery_path), `now` or when the recovery interval has passed (a save costs about as much
// as a small macro step; the master repeats the steps since the last one instead). Written
// before the reply, which tells it: a process that dies before leaves the previous file.
void CommandHandler::keep_for_recovery(ipc::StepReply& reply, bool now) {
  if (config_.recovery_path.empty()) return;
  const std::int64_t t = ipc::monotonic_ns();
  if (!now && t - saved_ns_ < std::int64_t{config_.recovery_interval_ms} * 1'000'000) return;
  reply.exported_bytes = runner_.export_state_to(config_.recovery_path, /*durable=*/false);
  saved_ns_ = t;
}

void CommandHandler::write_mirror() {
  runner_.accepted_state(std::span<double>(mirror_, config_.subsystem->state_size()));
}

namespace {

void pin(const std::vector<unsigned>& cpuset) {
  if (cpuset.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned c : cpuset) {
    if (c >= CPU_SETSIZE)
      throw std::runtime_error("cpuset: PU " + std::to_string(c) + " too large");
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    throw std::runtime_error(std::string("sched_setaffinity: ") + std::strerror(errno));
  }
}

// How a worker waits for its next command (DESIGN.md contract 3). Between two steps the master
// wakes up (it sleeps while the subsystems integrate), evaluates the coupling, the error and the
// output, and sends the next command: on a 2-core KVM guest that turnaround is 0.1-0.5 ms, and a
// worker that is asleep by then adds a futex wake-up to every macro step. So when every
// subsystem's runs fit on the run's CPUs (WaitPolicy::adaptive counted in runs, not processes) a
// worker stays awake for longer than that turnaround: kCommandSpinIterations PAUSEs (about 5 us,
// enough for a quick master), then up to kCommandYieldIterations sched_yield() calls (1-2 ms when
// the CPU is otherwise free), then it sleeps. The yields matter on a machine shared with other
// work, or when the master, which has no PU of its own, needs the CPU: a worker that only spun
// (32768 PAUSEs, ~0.6 ms, before protocol 4) kept the CPU for its whole budget whenever another
// task was queued behind it, and the scheduler did not always preempt it for the master; with 2
// subsystems on 2 CPUs beside a compiler job that made a macro step of the overhead bench take
// 0.7-1 ms instead of 50 us (bench/executor_overhead, floor column too). A yield hands the CPU
// to whatever is queued there and costs one system call when nothing is. When the runs do not
// fit, a waiting worker would take the core from one that still integrates, so it sleeps at once
// (yielding there was measured too: it lost badly whenever the machine had other load).
inline constexpr std::uint32_t kCommandSpinIterations = 256;
inline constexpr std::uint32_t kCommandYieldIterations = 2048;

}  // namespace

ipc::WaitPolicy worker_wait_policy(std::size_t subsystems, unsigned extra_runs,
                                   std::size_t run_cpus) noexcept {
  ipc::WaitPolicy policy =
      ipc::WaitPolicy::adaptive(subsystems * (1 + extra_runs), run_cpus, kCommandSpinIterations);
  if (policy.spin_iterations > 0) policy.yield_iterations = kCommandYieldIterations;
  return policy;
}

namespace {

// This process's handshake fields (not yet ready).
HandshakeInfo own_handshake() {
  HandshakeInfo hs;
  hs.pid = getpid();
  hs.protocol_version = ipc::kProtocolVersion;
  hs.layout_version = ipc::kSegmentLayoutVersion;
  return hs;
}

// The master's reason for a shutdown, for the log when it is not the normal end of a run.
void log_shutdown_reason(const ipc::SharedSegment& segment, const std::string& who) {
  const auto bye = segment.find("ms.bye");
  if (!bye) return;
  const auto& block = *reinterpret_cast<const ipc::ConfigBlock*>(segment.at(bye->offset));
  const std::string reason =
      decode_shutdown(block.data(), block.bytes.load(std::memory_order_acquire));
  if (!reason.empty() && reason != kNormalShutdown) {
    std::fprintf(stderr, "%s: shut down by the master: %s\n", who.c_str(), reason.c_str());
  }
}

// Serves the commands of the block's ring with `handler` until kShutdown (0) or until the
// master is gone (3).
int serve_ring(const ipc::SharedSegment& segment, ipc::RunBlock& run, ipc::SubsystemBlock& block,
               CommandHandler& handler, const ipc::WaitPolicy& policy, const std::string& who) {
  const pid_t master = run.master_pid;
  auto command = std::make_unique<ipc::StepCommand>();
  auto reply = std::make_unique<ipc::StepReply>();
  for (;;) {
    // The master rings the bell after pushing (protocol.hpp, "Waking").
    if (block.commands.pop_until(*command, run.command_bell, policy,
                                 ipc::WaitClock::now() + std::chrono::milliseconds(200)) ==
        ipc::WaitStatus::kTimedOut) {
      if (getppid() != master) return 3;  // orphaned (PDEATHSIG normally comes first)
      continue;
    }
    reply->received_ns = ipc::monotonic_ns();
    handler.handle(*command, *reply);
    reply->sent_ns = ipc::monotonic_ns();
    // The master waits on the reply counter, not on the ring: push quietly, then arrive (the
    // reply that completes the master's target wakes it).
    block.replies.push_quiet(*reply, policy);
    run.replies.arrive();
    if (command->kind == ipc::CommandKind::kShutdown) {
      log_shutdown_reason(segment, who);
      return 0;
    }
  }
}

}  // namespace

int run_worker(const std::string& segment_name, std::size_t index, int segment_fd) {
  const std::string who = "macrostep worker (subsystem " + std::to_string(index + 1) + ")";
  std::optional<ipc::SharedSegment> segment;
  ipc::ConfigBlock* handshake = nullptr;
  try {
    // The master decides when the run ends: the process executor starts each worker in a
    // process group of its own, so a Ctrl-C at the terminal reaches the master alone, which
    // stops after the current macro step and shuts the workers down. SIGINT is ignored in case
    // a worker is run otherwise; SIGTERM sent to a worker ends it (the master reports it).
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_DFL);
    // Die with the master; then make sure it had not died before prctl took effect.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      std::fprintf(stderr, "%s: prctl(PR_SET_PDEATHSIG): %s\n", who.c_str(), std::strerror(errno));
      return 4;
    }
    if (segment_fd >= 0) {
      segment.emplace(ipc::SharedSegment::attach_fd(segment_fd, segment_name));
      close(segment_fd);  // the mapping stays; the descriptor is not needed any more
    } else {
      segment.emplace(ipc::SharedSegment::attach(segment_name));
    }
    auto& run = segment->get<ipc::RunBlock>("ms.run");
    if (getppid() != run.master_pid) {
      std::fprintf(stderr, "%s: the master (pid %d) is gone\n", who.c_str(), run.master_pid);
      return 3;
    }
    if (run.protocol_version != ipc::kProtocolVersion || index >= run.subsystems) {
      std::fprintf(stderr, "%s: protocol %u / %u subsystems do not match this worker\n",
                   who.c_str(), run.protocol_version, run.subsystems);
      return 4;
    }
    const std::string block_name = ipc::region_name("ms.sub", index);
    const auto ref = segment->region(block_name);
    if (ref.size < sizeof(ipc::SubsystemBlock))
      throw std::runtime_error(block_name + " is too small");
    auto& block = *std::launder(reinterpret_cast<ipc::SubsystemBlock*>(segment->at(ref.offset)));
    if (block.magic != ipc::SubsystemBlock::kMagic ||
        block.protocol_version != ipc::kProtocolVersion ||
        block.command_size != sizeof(ipc::StepCommand) ||
        block.reply_size != sizeof(ipc::StepReply)) {
      throw std::runtime_error(block_name + " was laid out by another build of macrostep");
    }
    const auto inside = [&](std::uint64_t offset, std::uint64_t bytes) {
      return offset >= ref.offset && offset + bytes <= ref.offset + ref.size;
    };
    if (!inside(block.config_offset, sizeof(ipc::ConfigBlock)) ||
        !inside(block.state_offset, block.state_size * sizeof(double))) {
      throw std::runtime_error(block_name + ": offsets outside the region");
    }
    handshake = &block.handshake;
    const auto& cfg_block =
        *reinterpret_cast<const ipc::ConfigBlock*>(segment->at(block.config_offset));
    const std::uint64_t bytes = cfg_block.bytes.load(std::memory_order_acquire);
    DecodedConfig config = decode_config(cfg_block.data(), bytes);
    if (config.index != index) throw std::runtime_error("configuration of another subsystem");
    pin(config.cpuset);
    const ipc::WaitPolicy policy =
        worker_wait_policy(config.subsystems, config.extra_runs, segment->identity().run_cpus);
    if (block.state_size != config.subsystem->state_size() ||
        !inside(block.config_offset, sizeof(ipc::ConfigBlock) + bytes)) {
      throw std::runtime_error(block_name + ": state mirror or configuration of the wrong size");
    }
    const std::size_t state_size = config.subsystem->state_size();
    CommandHandler worker(std::move(config),
                          reinterpret_cast<double*>(segment->at(block.state_offset)),
                          block.progress);

    HandshakeInfo hs = own_handshake();
    hs.ready = true;
    hs.state_size = state_size;
    ipc::write_message(*handshake, encode_handshake(hs));

    return serve_ring(*segment, run, block, worker, policy, who);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    if (handshake != nullptr && handshake->bytes.load(std::memory_order_acquire) == 0) {
      HandshakeInfo hs = own_handshake();
      hs.error = e.what();
      try {
        ipc::write_message(*handshake, encode_handshake(hs));
      } catch (...) {
      }
    }
    return 4;
  }
}

}  // namespace macrostep::worker
