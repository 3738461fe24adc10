// The subsystem process (worker.hpp; DESIGN.md data flow). Its runs are those of a
// runner::SubsystemRunner, which the in-process executor uses too: results are bit-identical
// (contract 1).
#include "macrostep/worker/worker.hpp"

#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
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

namespace {

// The arena of DecodedConfig::threads threads; none for 1 (the runs stay in the calling thread).
std::unique_ptr<tbb::task_arena> runs_arena(int threads) {
  if (threads == 1) return nullptr;
  return std::make_unique<tbb::task_arena>(
      threads > 0 ? threads : static_cast<int>(tbb::task_arena::automatic));
}

}  // namespace

CommandHandler::CommandHandler(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress)
    : CommandHandler(std::move(config), mirror, progress, nullptr) {
  own_arena_ = runs_arena(config_.threads);
  arena_ = own_arena_.get();
}

CommandHandler::CommandHandler(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress,
                               tbb::task_arena* arena)
    : config_(std::move(config)),
      mirror_(mirror),
      runner_(*config_.subsystem, config_.initial_inputs,
              runner::RunnerOptions{config_.solver, config_.rollback, config_.jumps,
                                    config_.output_interval}),
      arena_(arena) {
  runner_.set_progress_counters([progress](std::size_t k) -> std::atomic<std::uint64_t>* {
    return k < ipc::kMaxRuns ? &progress[k].value : nullptr;
  });
  write_mirror();
}

CommandHandler::~CommandHandler() = default;

void CommandHandler::start_reply(const ipc::StepCommand& cmd, ipc::StepReply& reply) const {
  reply.status = ipc::ReplyStatus::kOk;
  reply.failed_run = 0;
  reply.error[0] = '\0';
  reply.id = cmd.id;
  reply.runs = 0;
  reply.feedthrough = 0;
  reply.samples = 0;
  reply.exported_bytes = 0;
  reply.solver_ns = reply.extra_ns = 0;
}

void CommandHandler::end_reply(ipc::StepReply& reply) const {
  reply.time = runner_.time();
  reply.snapshot_ns_total = runner_.snapshot_ns();
  set_total_stats(reply, runner_.total_stats());
}

void CommandHandler::handle(const ipc::StepCommand& cmd, ipc::StepReply& reply) {
  start_reply(cmd, reply);
  try {
    switch (cmd.kind) {
      case ipc::CommandKind::kStep:
        prepare_step(cmd);
        runner_.run_all(arena_);
        finish_step(reply);
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
  end_reply(reply);
}

// A step command's runs set up in the runner (throws what unpacking and prepare() throw).
void CommandHandler::prepare_step(const ipc::StepCommand& cmd) {
  unpack_runs(cmd, nominal_, extra_);
  runner_.prepare(cmd.t_end, nominal_, extra_);
}

// The prepared runs' results, after they have run.
void CommandHandler::finish_step(ipc::StepReply& reply) {
  encode_pass(runner_.result(0), runner_.extra_results(), config_.subsystem->output_size(),
              runner_.nominal_ns(), runner_.extra_ns(), reply);
  if (const std::string failure = runner_.failure(); !failure.empty()) {
    reply.set_failure(static_cast<std::uint32_t>(runner_.failed_run()), failure,
                      runner_.terminated());
  }
}

HandlerGroup::HandlerGroup(int threads) : arena_(runs_arena(threads)) {}

HandlerGroup::~HandlerGroup() = default;

void HandlerGroup::add(DecodedConfig config, double* mirror, ipc::ProgressCounter* progress) {
  members_.push_back(
      std::make_unique<CommandHandler>(std::move(config), mirror, progress, arena_.get()));
}

void HandlerGroup::handle(std::span<const ipc::StepCommand* const> commands,
                          std::span<ipc::StepReply* const> replies) {
  stepping_.clear();
  stepping_members_.clear();
  for (std::size_t k = 0; k < members_.size(); ++k) {
    if (commands[k] == nullptr) continue;
    CommandHandler& h = *members_[k];
    if (commands[k]->kind != ipc::CommandKind::kStep) {
      h.handle(*commands[k], *replies[k]);
      continue;
    }
    h.start_reply(*commands[k], *replies[k]);
    try {
      h.prepare_step(*commands[k]);
      stepping_.push_back(&h.runner_);
      stepping_members_.push_back(k);
    } catch (const std::exception& e) {
      replies[k]->set_failure(0, e.what());
      h.end_reply(*replies[k]);
    }
  }
  runner::run_prepared(stepping_, arena_.get(), tasks_);
  for (std::size_t k : stepping_members_) {
    CommandHandler& h = *members_[k];
    try {
      h.finish_step(*replies[k]);
    } catch (const std::exception& e) {
      replies[k]->set_failure(0, e.what());
    }
    h.end_reply(*replies[k]);
  }
}

// The runner's output evaluation (the in-process executor calls the same function).
void CommandHandler::evaluate(const ipc::StepCommand& cmd, ipc::StepReply& reply) {
  const runner::RunResult& r = runner_.evaluate_outputs(
      cmd.inputs(), cmd.after_event != 0 ? runner::EventSide::kAfter : runner::EventSide::kBefore);
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

}  // namespace

// How a worker waits for its next command (DESIGN.md contract 3). Between two steps the master
// wakes up (it sleeps while the subsystems integrate), evaluates the coupling, the error and the
// output, and sends the next command: on a 2-core KVM guest that turnaround is 0.1-0.5 ms, and a
// worker that is asleep by then adds a futex wake-up to every macro step. So when every
// subsystem's runs fit on the run's CPUs (WaitPolicy::adaptive counted in runs, not processes) a
// worker stays awake for longer than that turnaround (ipc::WaitPolicy::spin_yield_sleep): a short
// spin (about 5 us, enough for a quick master), then up to kYieldIterations sched_yield() calls
// (1-2 ms when the CPU is otherwise free), then it sleeps. The yields matter on a machine shared
// with other work, or when the master, which has no PU of its own, needs the CPU: a worker that
// only spun (32768 PAUSEs, ~0.6 ms, before protocol 4) kept the CPU for its whole budget whenever
// another task was queued behind it, and the scheduler did not always preempt it for the master;
// with 2 subsystems on 2 CPUs beside a compiler job that made a macro step of the overhead bench
// take 0.7-1 ms instead of 50 us (bench/executor_overhead, floor column too). A yield hands the CPU
// to whatever is queued there and costs one system call when nothing is; one that handed it
// over ends the yields (ipc::WaitPolicy::yield_iterations): on a CPU with other work a yielder
// would keep taking its fair share of it, so the worker sleeps. When the runs do not fit, a
// waiting worker would take the core from one that still integrates, so it sleeps at once
// (yielding there was measured too: it lost badly whenever the machine had other load).
ipc::WaitPolicy worker_wait_policy(std::size_t subsystems, unsigned extra_runs,
                                   std::size_t run_cpus) noexcept {
  return ipc::WaitPolicy::spin_yield_sleep(subsystems * (1 + extra_runs), run_cpus);
}

ipc::WaitPolicy worker_wait_policy(std::size_t subsystems, unsigned extra_runs,
                                   std::size_t run_cpus, std::size_t processes,
                                   int threads) noexcept {
  if (processes == 0 || processes >= subsystems) {
    return worker_wait_policy(subsystems, extra_runs, run_cpus);
  }
  // A group's runs compute at once on its arena's threads, at most (1: one after the other).
  const std::size_t group_runs = (subsystems + processes - 1) / processes * (1 + extra_runs);
  const std::size_t arena = threads == 1  ? 1
                            : threads > 0 ? static_cast<std::size_t>(threads)
                                          : std::max<std::size_t>(run_cpus, 1);
  return worker_wait_policy(processes * std::min(group_runs, arena), 0, run_cpus);
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

// Serves the rings of a group's blocks (blocks[k]: member k's) with `group` until every member
// has had its kShutdown (0) or until the master is gone (3). Each round takes at most one
// command per ring, the ones there at the time: the master pushes a step's commands before it
// rings the bell, so a sleeping group wakes to all of them and runs them together; accepts and
// rejects queued before are answered first, in their own round, as a single worker would.
int serve_rings(const ipc::SharedSegment& segment, ipc::RunBlock& run,
                std::span<ipc::SubsystemBlock* const> blocks, HandlerGroup& group,
                const ipc::WaitPolicy& policy, const std::string& who) {
  const pid_t master = run.master_pid;
  const std::size_t n = blocks.size();
  std::vector<std::unique_ptr<ipc::StepCommand>> commands;
  std::vector<std::unique_ptr<ipc::StepReply>> replies;
  std::vector<const ipc::StepCommand*> taken(n);
  std::vector<ipc::StepReply*> answers(n);
  for (std::size_t k = 0; k < n; ++k) {
    commands.push_back(std::make_unique<ipc::StepCommand>());
    replies.push_back(std::make_unique<ipc::StepReply>());
    answers[k] = replies[k].get();
  }
  const auto any_command = [&] {
    for (ipc::SubsystemBlock* b : blocks) {
      if (b->commands.size_approx() != 0) return true;  // reads tail with acquire
    }
    return false;
  };
  std::size_t shut = 0;
  for (;;) {
    bool any = false;
    const std::int64_t received = ipc::monotonic_ns();
    for (std::size_t k = 0; k < n; ++k) {
      taken[k] = blocks[k]->commands.try_pop(*commands[k]) ? commands[k].get() : nullptr;
      any = any || taken[k] != nullptr;
      if (taken[k] != nullptr) replies[k]->received_ns = received;
    }
    if (!any) {
      if (run.command_bell.wait(any_command, policy,
                                ipc::WaitClock::now() + std::chrono::milliseconds(200)) ==
              ipc::WaitStatus::kTimedOut &&
          getppid() != master) {
        return 3;  // orphaned (PDEATHSIG normally comes first)
      }
      continue;
    }
    group.handle(taken, answers);
    for (std::size_t k = 0; k < n; ++k) {
      if (taken[k] == nullptr) continue;
      replies[k]->sent_ns = ipc::monotonic_ns();
      blocks[k]->replies.push_quiet(*replies[k], policy);
      run.replies.arrive();
      if (taken[k]->kind == ipc::CommandKind::kShutdown) ++shut;
    }
    if (shut >= n) {
      log_shutdown_reason(segment, who);
      return 0;
    }
  }
}

// Subsystem `index`'s block of the segment, checked against this build and the region.
ipc::SubsystemBlock& subsystem_block(ipc::SharedSegment& segment, std::size_t index) {
  const std::string block_name = ipc::region_name("ms.sub", index);
  const auto ref = segment.region(block_name);
  if (ref.size < sizeof(ipc::SubsystemBlock))
    throw std::runtime_error(block_name + " is too small");
  auto& block = *std::launder(reinterpret_cast<ipc::SubsystemBlock*>(segment.at(ref.offset)));
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
  const auto& config = *reinterpret_cast<const ipc::ConfigBlock*>(segment.at(block.config_offset));
  if (!inside(block.config_offset,
              sizeof(ipc::ConfigBlock) + config.bytes.load(std::memory_order_acquire))) {
    throw std::runtime_error(block_name + ": configuration of the wrong size");
  }
  return block;
}

// The configuration in `block`, decoded and checked against the block.
DecodedConfig block_config(const ipc::SharedSegment& segment, const ipc::SubsystemBlock& block,
                           std::size_t index) {
  const auto& cfg_block =
      *reinterpret_cast<const ipc::ConfigBlock*>(segment.at(block.config_offset));
  DecodedConfig config =
      decode_config(cfg_block.data(), cfg_block.bytes.load(std::memory_order_acquire));
  if (config.index != index) throw std::runtime_error("configuration of another subsystem");
  if (block.state_size != config.subsystem->state_size()) {
    throw std::runtime_error(ipc::region_name("ms.sub", index) +
                             ": state mirror of the wrong size");
  }
  return config;
}

// "macrostep worker (subsystem 3)" or "macrostep worker (subsystems 3, 4)": 1-based.
std::string worker_name(std::span<const std::size_t> indices) {
  std::string who =
      indices.size() == 1 ? "macrostep worker (subsystem " : "macrostep worker (subsystems ";
  for (std::size_t k = 0; k < indices.size(); ++k) {
    who += (k > 0 ? ", " : "") + std::to_string(indices[k] + 1);
  }
  return who + ")";
}

// The PUs of a group's process: the members' lists joined in order, each PU once (empty if any
// member is not pinned: the process then runs where the OS puts it).
std::vector<unsigned> group_cpuset(const std::vector<DecodedConfig>& configs) {
  std::vector<unsigned> pus;
  for (const DecodedConfig& c : configs) {
    if (c.cpuset.empty()) return {};
    for (unsigned pu : c.cpuset) {
      if (std::find(pus.begin(), pus.end(), pu) == pus.end()) pus.push_back(pu);
    }
  }
  return pus;
}

// Writes "not ready: why" into every handshake of `blocks` that is still empty.
void fail_handshakes(std::span<ipc::SubsystemBlock* const> blocks, const std::string& why) {
  for (ipc::SubsystemBlock* b : blocks) {
    if (b->handshake.bytes.load(std::memory_order_acquire) != 0) continue;
    HandshakeInfo hs = own_handshake();
    hs.error = why;
    try {
      ipc::write_message(b->handshake, encode_handshake(hs));
    } catch (...) {
    }
  }
}

// A model that calls exit() in the middle of a step (an FMU that gives up, a plugin) ends the
// worker from one of its run threads while the others may still integrate, or exit too: glibc
// then runs the exit handlers and static destructors under them (a double free under ASan, a
// crash about half the time in release, reported as a signal). While the command loop runs, an
// exit handler registered after the models were loaded (so that it runs before theirs) ends the
// process at once with the model's status, its output flushed; the master names the cause.
std::atomic<bool> g_serving{false};

void end_at_once(int status, void*) {
  if (!g_serving.load(std::memory_order_acquire)) return;
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(status);
}

class ServingExit {
 public:
  ServingExit() {
    ::on_exit(end_at_once, nullptr);
    g_serving.store(true, std::memory_order_release);
  }
  ~ServingExit() { g_serving.store(false, std::memory_order_release); }
  ServingExit(const ServingExit&) = delete;
  ServingExit& operator=(const ServingExit&) = delete;
};

// The subsystems of `indices` on the attached segment: configurations, pinning, handshakes,
// then the command loop (one ring, or the group's).
int serve_subsystems(ipc::SharedSegment& segment, ipc::RunBlock& run,
                     std::span<const std::size_t> indices,
                     std::vector<ipc::SubsystemBlock*>& blocks, const std::string& who) {
  std::vector<DecodedConfig> configs;
  for (std::size_t index : indices) {
    if (index >= run.subsystems || std::count(indices.begin(), indices.end(), index) != 1) {
      throw std::runtime_error("no subsystem " + std::to_string(index + 1) + " for this worker");
    }
    blocks.push_back(&subsystem_block(segment, index));
  }
  for (std::size_t k = 0; k < indices.size(); ++k) {
    configs.push_back(block_config(segment, *blocks[k], indices[k]));
  }
  pin(group_cpuset(configs));
  const DecodedConfig& first = configs.front();
  const ipc::WaitPolicy policy =
      worker_wait_policy(first.subsystems, first.extra_runs, segment.identity().run_cpus,
                         first.processes, first.threads);
  const auto mirror = [&](std::size_t k) {
    return reinterpret_cast<double*>(segment.at(blocks[k]->state_offset));
  };
  const auto ready = [&](std::size_t k) {
    HandshakeInfo hs = own_handshake();
    hs.ready = true;
    hs.state_size = blocks[k]->state_size;
    ipc::write_message(blocks[k]->handshake, encode_handshake(hs));
  };
  if (indices.size() == 1) {
    CommandHandler worker(std::move(configs.front()), mirror(0), blocks[0]->progress);
    const ServingExit serving;
    ready(0);
    return serve_ring(segment, run, *blocks[0], worker, policy, who);
  }
  HandlerGroup group(first.threads);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    group.add(std::move(configs[k]), mirror(k), blocks[k]->progress);
  }
  const ServingExit serving;
  for (std::size_t k = 0; k < indices.size(); ++k) ready(k);
  return serve_rings(segment, run, blocks, group, policy, who);
}

}  // namespace

int run_worker(const std::string& segment_name, std::span<const std::size_t> indices,
               int segment_fd) {
  const std::string who = worker_name(indices);
  std::optional<ipc::SharedSegment> segment;
  std::vector<ipc::SubsystemBlock*> blocks;
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
    if (indices.empty()) {
      std::fprintf(stderr, "macrostep worker: no subsystem given\n");
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
    if (run.protocol_version != ipc::kProtocolVersion) {
      std::fprintf(stderr, "%s: protocol %u / %u subsystems do not match this worker\n",
                   who.c_str(), run.protocol_version, run.subsystems);
      return 4;
    }
    return serve_subsystems(*segment, run, indices, blocks, who);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    fail_handshakes(blocks, e.what());
    return 4;
  }
}

}  // namespace macrostep::worker
