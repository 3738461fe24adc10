// Waiting for a condition that another thread or process makes true: spin briefly, then sleep
// on a futex word that lives in the shared-memory segment (DESIGN.md contract 3).
//
// A WaitWord is one "event" between a waiter and a notifier, e.g. "the ring is no longer empty"
// (the consumer waits, the producer notifies). It is a plain object of 64 bytes that can be
// placed anywhere in shared memory (it holds no pointer, and its atomics are address-free);
// zero-initialised memory is a valid WaitWord, so the owner may construct it in place and
// attached processes only reinterpret it.
//
// Protocol (`ready` is the waiter's condition, e.g. tail != head; the notifier's "store" is the
// release store that can make it true, e.g. the producer publishing tail):
//
//   waiter                                        notifier
//   ------                                        --------
//   spin: ready()? return  (policy.spin)          store (release)      -- e.g. tail = t + 1
//   yield: ready()? return (policy.yield)         n = sleepers.fetch_add(0, acq_rel)   (R)
//   loop:                                         if n != 0:
//     sleepers.fetch_add(1, acq_rel)      (I)       seq.fetch_add(1, release)          (B)
//     s = seq.load(acquire)               (S)       FUTEX_WAKE(&seq, all)
//     if ready(): sleepers -= 1; return
//     FUTEX_WAIT(&seq, s, deadline)
//     sleepers.fetch_sub(1, release)      (D)
//     if ready(): return;  if timed out: return kTimedOut
//
// Why no wake-up is lost. Every modification of `sleepers` is a read-modify-write, so all of
// them (I and D of the waiter, R of the notifier) are totally ordered in its modification order
// and each reads the value of the one just before it. Take one loop iteration of the waiter:
//  - R before I: I reads from R or from a later RMW, which all belong to the release sequence
//    headed by R (release), and I is an acquire. So R synchronizes with I, the notifier's store
//    happens before the waiter's ready() check, and the waiter returns without sleeping.
//  - R between I and D: R reads a count that includes this waiter's +1, so n != 0 and the
//    notifier bumps seq (B) and wakes. If S read seq before B, FUTEX_WAIT either sees the changed
//    value (returns EAGAIN) or was already queued and is woken: the kernel compares the word and
//    queues the waiter atomically with respect to FUTEX_WAKE. If S read the value written by B,
//    B (release) synchronizes with S (acquire), the store is visible to ready() and the waiter
//    returns without sleeping. This is why S must come before ready(): checking ready() first
//    and reading seq afterwards could read the already bumped seq and sleep for ever.
//  - R after D: this iteration's FUTEX_WAIT has already returned; the next iteration's I comes
//    after R in the modification order, which is the first case.
// So the notifier needs one RMW on a cache line that stays in its own cache while nobody sleeps,
// and it issues a system call only when a waiter has announced itself (n != 0). Spurious wakes
// (EINTR, a bump from an earlier notification) only cost another loop iteration. The seq
// counter wraps at 2^32; an ABA would need 2^32 notifications between S and FUTEX_WAIT.
//
// The futex is shared (no FUTEX_PRIVATE_FLAG): the kernel keys it by the mapped object and
// offset, so waiter and notifier may be different processes mapping the segment anywhere.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace macrostep::ipc {

inline constexpr std::size_t kCacheLine = 64;

// One iteration of a spin loop: tells the core that this is a busy wait (x86 PAUSE), which
// saves power and avoids the memory-order mis-speculation penalty when the line changes.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The number of CPUs this thread may run on (CPU_COUNT of sched_getaffinity), at least 1.
std::size_t available_cpus() noexcept;

// How long a waiter busy-waits before it sleeps.
struct WaitPolicy {
  // About 0.1-0.5 ms of PAUSE loops on current x86 cores: longer than a ring round trip and a
  // short macro step, short enough not to matter when the waiter has a core of its own.
  static constexpr std::uint32_t kDefaultSpinIterations = 1u << 13;

  std::uint32_t spin_iterations = kDefaultSpinIterations;  // checks with PAUSE in between
  // Then checks with sched_yield() in between, for as long as the yields return at once: a
  // yield that took longer than kYieldGaveWay ran other work on this CPU (another run, a build,
  // the hypervisor's), and a waiter that kept yielding there would take its fair share of that
  // CPU from the work; it sleeps instead, and a futex wake-up also brings it back sooner than a
  // yielder waits for its turn.
  std::uint32_t yield_iterations = 0;
  static constexpr std::chrono::microseconds kYieldGaveWay{50};

  // Spin (bounded), then sleep: for processes that have a core each.
  static constexpr WaitPolicy spinning(std::uint32_t spins = kDefaultSpinIterations) noexcept {
    return WaitPolicy{spins, 0};
  }
  // Sleep at once: for oversubscribed runs, where a spinning waiter would steal the core from
  // the process it waits for.
  static constexpr WaitPolicy sleeping() noexcept { return WaitPolicy{0, 0}; }
  // spinning() if `processes` (the processes taking part in the run, this one included) fit on
  // `cpus`, sleeping() otherwise. A process that is pinned to a single PU must pass the CPU
  // count of the whole run (SegmentIdentity::run_cpus), not its own affinity.
  // `spins`: the budget when spinning (a waiter that expects a longer wait passes more).
  static WaitPolicy adaptive(std::size_t processes, std::size_t cpus,
                             std::uint32_t spins = kDefaultSpinIterations) noexcept;
  static WaitPolicy adaptive(std::size_t processes) noexcept {
    return adaptive(processes, available_cpus());
  }
  // The waits whose other side is a macro step or a master's turnaround away (the master for its
  // workers' replies, a worker for its next command): if `runs` (the threads computing at once,
  // the waiter's included) fit on `cpus`, kShortSpinIterations PAUSEs (about 5 us), then up to
  // kYieldIterations yields (1-2 ms on an otherwise free CPU), then sleep; else sleep at once.
  // Why the spin is short and the yields come after it: executors/src/ring_workers.cpp (the
  // master) and worker/src/worker.cpp (the worker).
  static constexpr std::uint32_t kShortSpinIterations = 256;
  static constexpr std::uint32_t kYieldIterations = 2048;
  static WaitPolicy spin_yield_sleep(std::size_t runs, std::size_t cpus) noexcept {
    WaitPolicy policy = adaptive(runs, cpus, kShortSpinIterations);
    if (policy.spin_iterations > 0) policy.yield_iterations = kYieldIterations;
    return policy;
  }
};

enum class WaitStatus { kReady, kTimedOut };

// steady_clock is CLOCK_MONOTONIC on Linux, the clock of FUTEX_WAIT_BITSET's absolute timeout.
using WaitClock = std::chrono::steady_clock;
using Deadline = std::optional<WaitClock::time_point>;  // nullopt: wait without limit

class alignas(kCacheLine) WaitWord {
 public:
  WaitWord() noexcept = default;
  WaitWord(const WaitWord&) = delete;
  WaitWord& operator=(const WaitWord&) = delete;

  // Returns kReady as soon as ready() is true, or kTimedOut once `deadline` has passed (ready()
  // may have become true in the meantime; callers re-check). ready() must read, with acquire
  // ordering, the location whose release store precedes the notifier's notify(). Only one
  // waiter per word is needed by the rings; several waiters are also correct (all are woken).
  // The condition is checked before every pause, yield and sleep, and after every sleep.
  template <class Ready>
  WaitStatus wait(Ready&& ready, const WaitPolicy& policy, const Deadline& deadline = std::nullopt);

  // Call after the release store that may make a waiter's condition true. No system call unless
  // a waiter sleeps or is about to.
  void notify() noexcept {
    // R of the protocol: an RMW (not a load) so that it is ordered against the waiter's I.
    if (sleepers_.fetch_add(0, std::memory_order_acq_rel) != 0) wake_sleepers();
  }

  // Diagnostics (relaxed reads; exact only when both sides are quiet).
  std::uint32_t sleepers() const noexcept { return sleepers_.load(std::memory_order_relaxed); }
  std::uint64_t wake_calls() const noexcept { return wake_calls_.load(std::memory_order_relaxed); }
  std::uint64_t sleep_calls() const noexcept {
    return sleep_calls_.load(std::memory_order_relaxed);
  }

 private:
  void wake_sleepers() noexcept;
  // FUTEX_WAIT on seq_ while it equals `expected`; false when the deadline has passed.
  bool sleep(std::uint32_t expected, const Deadline& deadline) noexcept;
  // sched_yield(); true if it took longer than WaitPolicy::kYieldGaveWay.
  static bool yield() noexcept;

  std::atomic<std::uint32_t> seq_{0};       // the futex word; bumped by every waking notify
  std::atomic<std::uint32_t> sleepers_{0};  // waiters between I and D
  std::atomic<std::uint64_t> wake_calls_{0};
  std::atomic<std::uint64_t> sleep_calls_{0};
};

static_assert(sizeof(WaitWord) == kCacheLine);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "the futex word must be a plain 32-bit integer");

template <class Ready>
WaitStatus WaitWord::wait(Ready&& ready, const WaitPolicy& policy, const Deadline& deadline) {
  for (std::uint32_t i = 0; i < policy.spin_iterations; ++i) {
    if (ready()) return WaitStatus::kReady;
    cpu_relax();
  }
  for (std::uint32_t i = 0; i < policy.yield_iterations; ++i) {
    if (ready()) return WaitStatus::kReady;
    if (yield()) break;  // the CPU has other work: sleep (WaitPolicy::yield_iterations)
  }
  for (;;) {
    sleepers_.fetch_add(1, std::memory_order_acq_rel);                // I
    const std::uint32_t seen = seq_.load(std::memory_order_acquire);  // S, before ready()
    if (ready()) {
      sleepers_.fetch_sub(1, std::memory_order_release);
      return WaitStatus::kReady;
    }
    const bool in_time = sleep(seen, deadline);
    sleepers_.fetch_sub(1, std::memory_order_release);  // D
    if (ready()) return WaitStatus::kReady;
    if (!in_time) return WaitStatus::kTimedOut;
  }
}

}  // namespace macrostep::ipc
