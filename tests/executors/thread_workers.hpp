// Workers as threads of the test process: a WorkerTransport and a WorkerSupervisor that are not
// the ring and the process supervisor, so that a test can drive ProcessExecutor through its two
// interfaces alone. Each worker is a thread that decodes its Cap'n Proto configuration and serves
// commands with the worker process's own command handler (worker::CommandHandler: a real
// SubsystemRunner), so the results are the same bits as in every other executor. Queues are
// guarded by a mutex (this is a test double of the transport, not a hot path).
#pragma once

#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "macrostep/executors/process_executor.hpp"
#include "macrostep/executors/worker_supervisor.hpp"
#include "macrostep/executors/worker_transport.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::testing {

class ThreadTransport final : public executors::WorkerTransport {
 public:
  ThreadTransport(std::vector<std::vector<std::byte>> configs, std::vector<std::size_t> state_sizes)
      : configs_(std::move(configs)), slots_(configs_.size()) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      slots_[i] = std::make_unique<Slot>();
      slots_[i]->mirror.assign(state_sizes[i], 0.0);
    }
  }
  ~ThreadTransport() override {
    for (std::size_t i = 0; i < slots_.size(); ++i) stop(i);
  }

  std::size_t workers() const override { return slots_.size(); }

  ipc::WaitStatus send(std::size_t i, const ipc::StepCommand& command,
                       std::chrono::milliseconds) override {
    {
      std::lock_guard lock(mutex_);
      slots_[i]->commands.push_back(std::make_unique<ipc::StepCommand>(command));
      ++expected_;
    }
    changed_.notify_all();
    return ipc::WaitStatus::kReady;
  }
  void wake() override {}  // a thread takes its command at once
  ipc::WaitStatus await_replies(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return arrived_ >= expected_; })
               ? ipc::WaitStatus::kReady
               : ipc::WaitStatus::kTimedOut;
  }
  bool try_receive(std::size_t i, ipc::StepReply& reply) override {
    std::lock_guard lock(mutex_);
    auto& q = slots_[i]->replies;
    if (q.empty()) return false;
    reply = *q.front();
    q.pop_front();
    return true;
  }
  std::size_t replies_waiting(std::size_t i) const override {
    std::lock_guard lock(mutex_);
    return slots_[i]->replies.size();
  }
  std::uint64_t progress(std::size_t i) const override {
    std::uint64_t sum = 0;
    for (const auto& c : slots_[i]->progress) sum += c.value.load(std::memory_order_relaxed);
    return sum;
  }
  void accepted_state(std::size_t i, std::span<double> z) const override {
    std::lock_guard lock(mutex_);
    std::copy_n(slots_[i]->mirror.begin(), z.size(), z.begin());
  }
  std::size_t state_size(std::size_t i) const override { return slots_[i]->mirror.size(); }
  std::optional<worker::HandshakeInfo> handshake(std::size_t i) const override {
    std::lock_guard lock(mutex_);
    return slots_[i]->handshake;
  }
  void workers_attached() override {}
  bool idle_workers_sleep() const override { return false; }
  void reset(std::span<const std::size_t> which) override {
    std::lock_guard lock(mutex_);
    for (std::size_t i : which) {
      slots_[i]->commands.clear();
      slots_[i]->replies.clear();
      slots_[i]->handshake.reset();
    }
    expected_ = arrived_;
  }
  void request_shutdown(std::span<const std::size_t> which, const std::string&) noexcept override {
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i : which) slots_[i]->shutdown = true;
    }
    changed_.notify_all();
  }
  std::string name() const override { return "threads of the test process"; }

  // The supervisor's side: worker i's thread.
  void start(std::size_t i) {
    stop(i);
    slots_[i]->shutdown = false;
    slots_[i]->thread = std::thread([this, i] { serve(i); });
  }
  void stop(std::size_t i) noexcept {
    request_shutdown(std::span(&i, 1), {});
    if (slots_[i]->thread.joinable()) slots_[i]->thread.join();
  }
  bool running(std::size_t i) const { return slots_[i]->thread.joinable(); }
  // While held, worker i takes no further command: a hung worker, whose progress stands still
  // (it ends when stopped).
  void hold(std::size_t i, bool held) {
    {
      std::lock_guard lock(mutex_);
      slots_[i]->held = held;
    }
    changed_.notify_all();
  }

 private:
  struct Slot {
    std::deque<std::unique_ptr<ipc::StepCommand>> commands;
    std::deque<std::unique_ptr<ipc::StepReply>> replies;
    std::array<ipc::ProgressCounter, ipc::kMaxRuns> progress;
    std::vector<double> mirror;
    std::optional<worker::HandshakeInfo> handshake;
    bool shutdown = false;
    bool held = false;
    std::thread thread;
  };

  void serve(std::size_t i) {
    Slot& slot = *slots_[i];
    worker::HandshakeInfo hs;
    hs.pid = getpid();
    hs.protocol_version = ipc::kProtocolVersion;
    hs.layout_version = ipc::kSegmentLayoutVersion;
    hs.state_size = slot.mirror.size();
    std::optional<worker::CommandHandler> handler;
    std::vector<double> mirror(slot.mirror.size());
    try {
      handler.emplace(worker::decode_config(configs_[i].data(), configs_[i].size()), mirror.data(),
                      slot.progress.data());
      hs.ready = true;
    } catch (const std::exception& e) {
      hs.error = e.what();
    }
    {
      std::lock_guard lock(mutex_);
      slot.mirror = mirror;
      slot.handshake = hs;
    }
    if (!handler) return;
    auto reply = std::make_unique<ipc::StepReply>();
    for (;;) {
      std::unique_ptr<ipc::StepCommand> command;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock,
                      [&] { return slot.shutdown || (!slot.held && !slot.commands.empty()); });
        if (slot.shutdown && slot.commands.empty()) return;
        if (slot.held) return;  // stopped while held
        command = std::move(slot.commands.front());
        slot.commands.pop_front();
      }
      reply->received_ns = ipc::monotonic_ns();
      handler->handle(*command, *reply);
      reply->sent_ns = ipc::monotonic_ns();
      {
        std::lock_guard lock(mutex_);
        slot.mirror = mirror;
        slot.replies.push_back(std::make_unique<ipc::StepReply>(*reply));
        ++arrived_;
      }
      changed_.notify_all();
      if (command->kind == ipc::CommandKind::kShutdown) return;
    }
  }

  std::vector<std::vector<std::byte>> configs_;
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t expected_ = 0, arrived_ = 0;
};

// The workers of a ThreadTransport: a thread per worker, started and ended on request.
class ThreadSupervisor final : public executors::WorkerSupervisor {
 public:
  explicit ThreadSupervisor(ThreadTransport& threads) : threads_(threads) {}
  std::size_t workers() const override { return threads_.workers(); }
  void start(std::size_t i) override { threads_.start(i); }
  std::optional<std::string> ended(std::size_t) override { return std::nullopt; }
  void kill(std::size_t i) noexcept override { threads_.stop(i); }
  pid_t pid(std::size_t) const override { return getpid(); }
  void stop_all(std::chrono::milliseconds) noexcept override {
    for (std::size_t i = 0; i < threads_.workers(); ++i) threads_.stop(i);
  }
  std::optional<executors::SchedulingSample> scheduling(std::size_t i) const override {
    return scheduling_of ? scheduling_of(i) : std::nullopt;
  }

  // What scheduling() reports (a test's stand-in for /proc); unset: nothing.
  std::function<std::optional<executors::SchedulingSample>(std::size_t)> scheduling_of;

 private:
  ThreadTransport& threads_;
};

// The parts of a ProcessExecutor whose workers are threads: each gets the configuration a worker
// process would get (worker_setup + encode_config), and decodes it itself. `threads` and
// `supervisor` point into `parts` (the executor owns them once given the parts).
struct ThreadWorkerParts {
  executors::WorkerParts parts;
  ThreadTransport* threads = nullptr;
  ThreadSupervisor* supervisor = nullptr;
};

inline ThreadWorkerParts thread_workers(std::span<const executors::ProcessWorkerSpec> specs,
                                        const executors::ProcessOptions& options) {
  std::vector<std::vector<std::byte>> configs;
  std::vector<std::size_t> state_sizes;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    configs.push_back(
        worker::encode_config(executors::worker_setup(specs[i], i, specs.size(), options)));
    state_sizes.push_back(specs[i].states);
  }
  ThreadWorkerParts out;
  auto threads = std::make_unique<ThreadTransport>(std::move(configs), std::move(state_sizes));
  auto supervisor = std::make_unique<ThreadSupervisor>(*threads);
  out.threads = threads.get();
  out.supervisor = supervisor.get();
  out.parts.supervisor = std::move(supervisor);
  out.parts.transport = std::move(threads);
  return out;
}

}  // namespace macrostep::testing
