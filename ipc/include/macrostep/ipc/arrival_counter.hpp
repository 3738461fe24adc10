// ArrivalCounter: one waiter sleeps until a number of arrivals (e.g. the replies of N worker
// processes) have come in, and is woken once, by the arrival that completes them, instead of
// once per arrival (DESIGN.md contract 3: spin, then sleep on a futex in the segment).
//
// The counts are running totals: `arrived` counts every arrival since construction, `target` is
// the total the waiter waits for. A waiter that hands out k more pieces of work raises the target
// by k first; it lowers it again only for work that it then failed to hand out (no arrival will
// come for it).
//
//   waiter (one thread at a time)               arriving side (any thread or process)
//   ------                                      -------------
//   expect(t): target = t           (release)   ... finish the piece: release stores that
//   hand out the work (release, e.g. a ring)        the waiter will read (e.g. a ring push)
//   wait(): until arrived >= target             a = arrived.fetch_add(1, acq_rel) + 1
//                                               if a >= target.load(acquire): word.notify()
//
// Why the waiter is woken. wait() waits for the current target T, and every piece of work
// counted in T was handed out after expect(T). So the arrival that makes `arrived` reach T took
// its work after the release store of T, reads T (or a later target: not possible while the
// waiter waits, since only the waiter raises it) and notifies. The sleep / wake itself is the
// WaitWord protocol (wait.hpp), with "arrived >= target" as the waiter's condition: the
// arrival's fetch_add (release) precedes its notify, so no wake-up is lost. Arrivals that do not
// reach the target (the first N - 1 replies) cost one RMW on the `arrived` line and no system
// call; only the last one may make one (FUTEX_WAKE, if the waiter sleeps).
//
// Visibility: the waiter's acquire load of `arrived` reads from the release sequence of every
// arrival's fetch_add, so whatever an arriving side stored before arrive() (its reply in a ring)
// is visible to the waiter once wait() returns kReady.
//
// Counts wrap at 2^32 and are compared as a signed difference: at most 2^31 - 1 arrivals may be
// outstanding. Zero-initialised memory is a valid counter (nothing outstanding); it holds no
// pointer, so it works in a shared-memory segment at any address.
#pragma once

#include <atomic>
#include <cstdint>

#include "macrostep/ipc/wait.hpp"

namespace macrostep::ipc {

class alignas(kCacheLine) ArrivalCounter {
 public:
  ArrivalCounter() noexcept = default;
  ArrivalCounter(const ArrivalCounter&) = delete;
  ArrivalCounter& operator=(const ArrivalCounter&) = delete;

  // ---- waiter --------------------------------------------------------------------------------

  // The running total of arrivals to wait for: the current target plus the pieces of work about
  // to be handed out. Call before handing them out.
  void expect(std::uint32_t target) noexcept { target_.store(target, std::memory_order_release); }
  // expect(target() + n).
  void expect_more(std::uint32_t n) noexcept { expect(target() + n); }
  std::uint32_t target() const noexcept { return target_.load(std::memory_order_relaxed); }

  // True once every arrival counted in the target has come in.
  bool complete() const noexcept { return reached(arrived_.load(std::memory_order_acquire)); }

  // Waits (spin, then sleep) until complete(); kTimedOut once `deadline` has passed.
  WaitStatus wait(const WaitPolicy& policy, const Deadline& deadline = std::nullopt) noexcept {
    // Checked first: with a sleeping policy WaitWord::wait would announce itself (two RMWs on the
    // line the last arrival notifies through) before it looks.
    if (complete()) return WaitStatus::kReady;
    return word_.wait([this] { return complete(); }, policy, deadline);
  }

  // ---- arriving side -------------------------------------------------------------------------

  // One arrival, after the stores the waiter must see. Wakes the waiter if this one completes
  // the target and the waiter sleeps.
  void arrive() noexcept {
    const std::uint32_t now = arrived_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (reached(now)) word_.notify();
  }

  // ---- diagnostics (relaxed; exact only when both sides are quiet) ---------------------------

  std::uint32_t arrived() const noexcept { return arrived_.load(std::memory_order_relaxed); }
  const WaitWord& word() const noexcept { return word_; }

 private:
  bool reached(std::uint32_t arrived) const noexcept {
    return static_cast<std::int32_t>(arrived - target_.load(std::memory_order_acquire)) >= 0;
  }

  // Each on its own line: `arrived` is written by every arriving side, `target` by the waiter
  // only (read by the arriving sides once per arrival), the word is the waiter's.
  std::atomic<std::uint32_t> arrived_{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> target_{0};
  WaitWord word_;
};

static_assert(sizeof(ArrivalCounter) == 3 * kCacheLine);

}  // namespace macrostep::ipc
