// RingTransport (ring_transport.hpp; DESIGN.md contract 3).
#include "macrostep/executors/ring_transport.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

namespace macrostep::executors {

namespace {

// A master killed with SIGKILL before its workers attached leaves its segment in
// /dev/shm; the next run removes it (so does `macrostep cleanup`, at once). Only segments older
// than a minute: a run must not race `cleanup` or the tests that inspect fresh stale segments.
void remove_dead_runs_segments() {
  using namespace std::chrono_literals;
  for (const ipc::StaleSegment& s : ipc::remove_stale_segments(60s)) {
    fmt::print(stderr,
               "macrostep: removed the shared-memory segment {} of a run that is gone ({})\n",
               s.name, s.reason);
  }
}

// A segment large enough for every worker's block (sized by its configuration and state).
ipc::SharedSegment create_segment(std::span<const std::vector<std::byte>> configs,
                                  std::span<const std::size_t> state_sizes) {
  if (state_sizes.size() != configs.size()) {
    throw std::invalid_argument("RingTransport: one state size per configuration required");
  }
  std::size_t bytes = 4096;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    bytes += ipc::subsystem_layout(state_sizes[i], configs[i].size()).bytes + 128;
  }
  ipc::SegmentOptions options;
  options.region_bytes = bytes;
  remove_dead_runs_segments();
  return ipc::SharedSegment::create(options);
}

}  // namespace

RingTransport::RingTransport(std::span<const std::vector<std::byte>> configs,
                             std::span<const std::size_t> state_sizes,
                             std::optional<ipc::WaitPolicy> policy, pid_t master,
                             unsigned extra_runs, std::size_t processes, int threads)
    : segment_(create_segment(configs, state_sizes)),
      state_sizes_(state_sizes.begin(), state_sizes.end()) {
  const std::size_t n = configs.size();
  run_ = &segment_.construct<ipc::RunBlock>("ms.run");
  run_->subsystems = static_cast<std::uint32_t>(n);
  run_->master_pid = master;
  const auto bye = segment_.allocate("ms.bye", worker::kShutdownRegionBytes);
  bye_ = new (segment_.at(bye.offset)) ipc::ConfigBlock();
  bye_->capacity = worker::kShutdownRegionBytes - sizeof(ipc::ConfigBlock);
  for (std::size_t i = 0; i < n; ++i) {
    const auto layout = ipc::subsystem_layout(state_sizes[i], configs[i].size());
    const auto ref = segment_.allocate(ipc::region_name("ms.sub", i), layout.bytes);
    auto* block = new (segment_.at(ref.offset)) ipc::SubsystemBlock();
    block->state_offset = ref.offset + layout.state_offset;
    block->state_size = state_sizes[i];
    block->config_offset = ref.offset + layout.config_offset;
    auto* cfg = new (segment_.at(block->config_offset)) ipc::ConfigBlock();
    cfg->capacity = configs[i].size();
    ipc::write_message(*cfg, configs[i]);
    block->handshake.capacity = sizeof(block->handshake_data);
    blocks_.push_back(block);
  }
  policy_ = policy ? *policy : ipc::WaitPolicy::adaptive(n + 1, segment_.identity().run_cpus);
  idle_workers_sleep_ =
      worker::worker_wait_policy(n, extra_runs, segment_.identity().run_cpus, processes, threads)
          .spin_iterations == 0;
}

RingTransport::~RingTransport() = default;

ipc::WaitStatus RingTransport::send(std::size_t i, const ipc::StepCommand& command,
                                    std::chrono::milliseconds timeout) {
  // The reply's arrival must find the raised target: raise it before the worker can see the
  // command, and take it back if the command was not queued (no reply will come for it).
  run_->replies.expect_more(1);
  const ipc::WaitStatus status =
      blocks_[i]->commands.push_quiet_until(command, policy_, ipc::WaitClock::now() + timeout);
  if (status == ipc::WaitStatus::kTimedOut) run_->replies.expect(run_->replies.target() - 1);
  return status;
}

void RingTransport::wake() {
  run_->command_bell.notify();
}

ipc::WaitStatus RingTransport::await_replies(std::chrono::milliseconds timeout) {
  return run_->replies.wait(policy_, ipc::WaitClock::now() + timeout);
}

bool RingTransport::try_receive(std::size_t i, ipc::StepReply& reply) {
  return blocks_[i]->replies.try_pop(reply);
}

std::size_t RingTransport::replies_waiting(std::size_t i) const {
  return blocks_[i]->replies.size_approx();
}

bool RingTransport::try_send(std::size_t i, const ipc::StepCommand& command) {
  run_->replies.expect_more(1);
  if (!blocks_[i]->commands.try_push_quiet(command)) {
    run_->replies.expect(run_->replies.target() - 1);
    return false;
  }
  wake();
  return true;
}

std::uint64_t RingTransport::progress(std::size_t i) const {
  std::uint64_t sum = 0;
  for (const auto& counter : blocks_[i]->progress) {
    sum += counter.value.load(std::memory_order_relaxed);
  }
  return sum;
}

void RingTransport::accepted_state(std::size_t i, std::span<double> z) const {
  if (z.size() != state_sizes_.at(i)) {
    throw std::invalid_argument("RingTransport::accepted_state: wrong size");
  }
  std::memcpy(z.data(), segment_.at(blocks_[i]->state_offset), z.size() * sizeof(double));
}

std::optional<worker::HandshakeInfo> RingTransport::handshake(std::size_t i) const {
  const auto& hs = blocks_.at(i)->handshake;
  const std::uint64_t b = hs.bytes.load(std::memory_order_acquire);
  if (b == 0) return std::nullopt;
  return worker::decode_handshake(hs.data(), b);
}

void RingTransport::reset(std::span<const std::size_t> which) {
  // Only the ended workers owed replies: the counter waits for those of new commands only.
  run_->replies.expect(run_->replies.arrived());
  for (std::size_t i : which) {
    ipc::SubsystemBlock& block = *blocks_.at(i);
    // The rings may hold a command the old process never took, or a reply nobody read, and
    // their wait words may count a sleeper that no longer exists: construct them anew.
    std::destroy_at(&block.commands);
    new (&block.commands) ipc::CommandRing();
    std::destroy_at(&block.replies);
    new (&block.replies) ipc::ReplyRing();
    block.handshake.bytes.store(0, std::memory_order_release);
  }
}

void RingTransport::request_shutdown(std::span<const std::size_t> which,
                                     const std::string& reason) noexcept {
  write_shutdown(reason);
  ipc::StepCommand& bye = *shutdown_command_;
  bye.kind = ipc::CommandKind::kShutdown;
  bye.clear_runs();
  for (std::size_t i : which) {
    ++bye.id;
    (void)try_send(i, bye);
  }
}

void RingTransport::write_shutdown(const std::string& reason) noexcept {
  if (bye_ == nullptr || bye_->bytes.load(std::memory_order_relaxed) != 0) return;
  try {
    ipc::write_message(*bye_, worker::encode_shutdown(reason));
  } catch (...) {
    // The reason is for the workers' log only.
  }
}

}  // namespace macrostep::executors
