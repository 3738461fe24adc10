// Single-producer single-consumer ring of fixed-size POD slots for the master <-> subsystem hot
// path (DESIGN.md contract 3).
//
// What callers may rely on:
//  - At any time at most one thread (in any process) calls the producer functions (try_push,
//    push, push_until, push_for) and at most one thread calls the consumer functions (try_pop,
//    pop, pop_until, pop_for). The roles may move between threads only with a happens-before
//    edge between the old and the new thread (e.g. a thread join).
//  - Values come out in the order they went in, each exactly once.
//  - try_push / try_pop never block and make no system call: a memcpy, one release store of the
//    slot's sequence number (push) or of head (pop), an acquire load of head by the producer only
//    when its cached copy says full, and WaitWord::notify(), one RMW on a line that stays in the
//    caller's cache while nobody sleeps. A system call happens only when the other side sleeps
//    (futex wake), or in the blocking functions after their spin budget (futex wait).
//  - Variable-length messages: if T has a member `std::size_t wire_bytes() const` (at most
//    sizeof(T)), only that prefix of the value is copied into and out of the ring; the bytes of
//    the consumer's `out` beyond it keep whatever they held. A message type puts its used part
//    first (e.g. a count, then a packed array) so that a small message costs a cache line or
//    two, not sizeof(T).
//  - Batched wake-ups: a producer that feeds many rings (the master broadcasting a command to N
//    workers) may use try_push_quiet / push_quiet, which publish the value without notifying the
//    ring's own not_empty word, and then notify once a WaitWord that all its consumers sleep on
//    (one FUTEX_WAKE for all of them instead of one per ring). Such a consumer waits with the
//    pop_until overload that takes that word. Producer and consumer must agree on the word: a
//    consumer sleeping on a shared word is not woken by try_push, nor one sleeping on not_empty
//    by a quiet push plus a notify of another word.
//  - The ring holds no pointer, so it works at any address; placed in a SharedSegment it works
//    across processes. The owner constructs it in place (create()); other processes look it up
//    by name (attach()), which checks that it was built for the same capacity, slot size and
//    value type size / alignment, and throws SegmentError (kBadRegion) otherwise.
//
// Layout: a descriptor line, then the producer's line (tail and its cached copy of head), the
// consumer's line (head), one WaitWord for each direction, then the slots, each starting on its
// own cache line. A slot is a header (its sequence number and the message length) followed by
// the message. Head and tail are free-running 64-bit counters (they never wrap in practice); a
// slot index is the counter modulo Capacity.
//
// Why a sequence number in every slot: the consumer waits on the header of the slot it will
// read next, so the cache line that tells it "a message is here" also carries the message's
// first bytes. With a separate tail index the consumer needs two cache-line transfers in series
// (tail, then the slot) per message; here it needs one, plus the rest of a longer message,
// whose lines it fetches in parallel (and, while it spins, prefetches: has_data()). The
// producer stores counter + 1 into the slot's sequence (release) after the message; the consumer of
// counter `head` accepts the slot when it reads exactly head + 1 (acquire), which no older lap of
// the slot can hold. tail_ is the producer's own counter, on its own line; the consumer never
// reads it (size_approx() does).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>

#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/wait.hpp"

namespace macrostep::ipc {

namespace detail {
struct RingShape {
  std::uint64_t capacity;
  std::uint64_t value_size;
  std::uint64_t value_align;
};
// Throws SegmentError(kBadRegion) naming the segment, the ring and both shapes.
[[noreturn]] void throw_ring_layout_mismatch(std::string_view segment, std::string_view ring,
                                             bool is_ring, const RingShape& found,
                                             const RingShape& expected);
}  // namespace detail

// The number of bytes of `value` that travel through a ring: value.wire_bytes() if T declares
// it (clamped to sizeof(T)), else sizeof(T).
template <class T>
std::size_t wire_bytes_of(const T& value) noexcept {
  if constexpr (requires {
                  { value.wire_bytes() } -> std::convertible_to<std::size_t>;
                }) {
    return std::min<std::size_t>(value.wire_bytes(), sizeof(T));
  } else {
    return sizeof(T);
  }
}

template <class T, std::size_t Capacity>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "ring slots are copied with memcpy");
  static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0,
                "Capacity must be a power of two");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                "ring indices must be lock-free (address-free) atomics to work across processes");

  // A slot's header: the sequence number (counter + 1 once the message of that counter is
  // complete) and the number of message bytes that follow it.
  struct SlotHeader {
    std::atomic<std::uint64_t> seq;
    std::uint64_t bytes;
  };

 public:
  using value_type = T;
  static constexpr std::size_t kCapacity = Capacity;
  static constexpr std::size_t kSlotAlign = std::max(kCacheLine, alignof(T));
  // The message starts right after the header, at T's alignment.
  static constexpr std::size_t kPayloadOffset =
      (sizeof(SlotHeader) + alignof(T) - 1) / alignof(T) * alignof(T);
  static constexpr std::size_t kSlotSize =
      (kPayloadOffset + sizeof(T) + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
  static constexpr std::uint64_t kMagic = 0x474e'4952'4353'5053ULL;  // "SPSCRING" (LE)
  // Lines the waiting consumer prefetches beyond a slot's first (has_data()).
  static constexpr std::size_t kPrefetchLines = 16;

  // An empty ring: every slot's sequence is 0, which no message has (counter + 1 >= 1). In
  // shared memory only the owner constructs (create()); attached processes never construct,
  // they reinterpret (attach()). Message bytes are left uninitialised.
  SpscRing() noexcept {
    for (std::size_t i = 0; i < Capacity; ++i) {
      auto* h = new (header(i)) SlotHeader;
      h->seq.store(0, std::memory_order_relaxed);
      h->bytes = 0;
    }
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Owner: constructs an empty ring in a new region `name` of the segment.
  static SpscRing& create(SharedSegment& segment, std::string_view name) {
    return segment.construct<SpscRing>(name);
  }
  // Any process: the ring that the owner created under `name`, after checking its layout.
  static SpscRing& attach(const SharedSegment& segment, std::string_view name) {
    SpscRing& ring = segment.get<SpscRing>(name);
    ring.check_layout(segment.name(), name);
    return ring;
  }

  // ---- producer ------------------------------------------------------------------------------

  // Appends `value` (its wire_bytes_of prefix) unless the ring is full. Wakes a sleeping
  // consumer.
  bool try_push(const T& value) noexcept {
    if (!try_push_quiet(value)) return false;
    not_empty_.notify();
    return true;
  }

  // As try_push, but wakes nobody: the caller notifies the word its consumer waits on (see
  // "Batched wake-ups" above).
  bool try_push_quiet(const T& value) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);  // only we write it
    if (tail - head_cache_ >= Capacity) {
      // Acquire pairs with the consumer's release store of head: its reads of the slot we are
      // about to overwrite happened before.
      head_cache_ = head_.load(std::memory_order_acquire);
      if (tail - head_cache_ >= Capacity) return false;
    }
    const std::size_t index = tail & (Capacity - 1);
    SlotHeader* h = header(index);
    const std::size_t bytes = wire_bytes_of(value);
    h->bytes = bytes;
    std::memcpy(payload(index), &value, bytes);
    // Release publishes the header and the message to the consumer's acquire load of seq.
    h->seq.store(tail + 1, std::memory_order_release);
    tail_.store(tail + 1, std::memory_order_release);  // own counter; others: size_approx()
    return true;
  }

  // Appends `value`, waiting (spin, then futex) while the ring is full.
  void push(const T& value, const WaitPolicy& policy) noexcept {
    while (!try_push(value)) not_full_.wait([this] { return has_space(); }, policy);
  }

  // As push(), but publishes with try_push_quiet (the caller notifies its consumer's word).
  void push_quiet(const T& value, const WaitPolicy& policy) noexcept {
    while (!try_push_quiet(value)) not_full_.wait([this] { return has_space(); }, policy);
  }

  // As push(), but gives up at `deadline`: kTimedOut means the value was not appended (e.g. the
  // consumer is dead or hung; the caller checks on it and may retry).
  WaitStatus push_until(const T& value, const WaitPolicy& policy,
                        WaitClock::time_point deadline) noexcept {
    const WaitStatus status = push_quiet_until(value, policy, deadline);
    if (status == WaitStatus::kReady) not_empty_.notify();
    return status;
  }
  // As push_until(), but publishes with try_push_quiet (the caller notifies its consumer's word).
  WaitStatus push_quiet_until(const T& value, const WaitPolicy& policy,
                              WaitClock::time_point deadline) noexcept {
    while (!try_push_quiet(value)) {
      if (not_full_.wait([this] { return has_space(); }, policy, deadline) ==
          WaitStatus::kTimedOut) {
        return try_push_quiet(value) ? WaitStatus::kReady : WaitStatus::kTimedOut;
      }
    }
    return WaitStatus::kReady;
  }
  template <class Rep, class Period>
  WaitStatus push_for(const T& value, const WaitPolicy& policy,
                      std::chrono::duration<Rep, Period> timeout) noexcept {
    return push_until(value, policy, WaitClock::now() + timeout);
  }

  // ---- consumer ------------------------------------------------------------------------------

  // Removes the oldest value into `out` (its first wire bytes; the rest of `out` is unchanged)
  // unless the ring is empty. Wakes a sleeping producer.
  bool try_pop(T& out) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);  // only we write it
    const std::size_t index = head & (Capacity - 1);
    const SlotHeader* h = header(index);
    // Acquire pairs with the producer's release store of seq: the message is visible.
    if (h->seq.load(std::memory_order_acquire) != head + 1) return false;
    // The length comes from the peer process's memory: never copy more than `out` holds.
    const std::size_t bytes = std::min<std::size_t>(h->bytes, sizeof(T));
    std::memcpy(&out, payload(index), bytes);
    prefetch_lines_ =
        std::min<std::size_t>((kPayloadOffset + bytes - 1) / kCacheLine, kPrefetchLines);
    // Release: our read of the slot happens before the producer, having seen the new head,
    // overwrites it.
    head_.store(head + 1, std::memory_order_release);
    not_full_.notify();
    return true;
  }

  // Removes the oldest value, waiting (spin, then futex) while the ring is empty.
  void pop(T& out, const WaitPolicy& policy) noexcept {
    while (!try_pop(out)) not_empty_.wait([this] { return has_data(); }, policy);
  }
  T pop(const WaitPolicy& policy) noexcept {
    T out;
    pop(out, policy);
    return out;
  }

  // As pop(), but gives up at `deadline`: kTimedOut means `out` is unchanged (e.g. the producer
  // is dead or hung; the caller checks on it and may retry).
  WaitStatus pop_until(T& out, const WaitPolicy& policy, WaitClock::time_point deadline) noexcept {
    while (!try_pop(out)) {
      if (not_empty_.wait([this] { return has_data(); }, policy, deadline) ==
          WaitStatus::kTimedOut) {
        return try_pop(out) ? WaitStatus::kReady : WaitStatus::kTimedOut;
      }
    }
    return WaitStatus::kReady;
  }
  // As pop_until(), but sleeps on `word`, which the producer notifies after its quiet pushes
  // (see "Batched wake-ups" above); `word` may be shared by the consumers of many rings.
  WaitStatus pop_until(T& out, WaitWord& word, const WaitPolicy& policy,
                       WaitClock::time_point deadline) noexcept {
    while (!try_pop(out)) {
      if (word.wait([this] { return has_data(); }, policy, deadline) == WaitStatus::kTimedOut) {
        return try_pop(out) ? WaitStatus::kReady : WaitStatus::kTimedOut;
      }
    }
    return WaitStatus::kReady;
  }
  template <class Rep, class Period>
  WaitStatus pop_for(T& out, const WaitPolicy& policy,
                     std::chrono::duration<Rep, Period> timeout) noexcept {
    return pop_until(out, policy, WaitClock::now() + timeout);
  }

  // ---- observers (any thread; a snapshot that may be outdated when it returns) ---------------

  std::size_t size_approx() const noexcept {
    const std::uint64_t head = head_.load(std::memory_order_acquire);  // head first: tail >= it
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    return static_cast<std::size_t>(tail - head);
  }
  static constexpr std::size_t capacity() noexcept { return Capacity; }
  // The consumer sleeps on not_empty, the producer on not_full (futex statistics for benches).
  const WaitWord& not_empty_word() const noexcept { return not_empty_; }
  const WaitWord& not_full_word() const noexcept { return not_full_; }

 private:
  // Producer's wait condition: a slot is free. Reads head with acquire (the consumer's release
  // store precedes its not_full_.notify()).
  bool has_space() const noexcept {
    return tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_acquire) < Capacity;
  }
  // The consumer's wait condition: the next slot holds its message (seq read with acquire; the
  // producer's release store precedes its not_empty_.notify()). It also prefetches the lines
  // after the header of the slot it waits on, as many as the previous message had (at most
  // kPrefetchLines). The producer writes them before the sequence number, so by the time the
  // consumer sees the new sequence, the prefetches issued meanwhile have usually brought the rest
  // of the message too: one cache-line latency per message instead of two in series (header, then
  // the rest). A prefetch is only a hint: the message is still read after the acquire load of seq.
  bool has_data() const noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::byte* slot_begin = slots_ + (head & (Capacity - 1)) * kSlotSize;
    for (std::size_t line = 1; line <= prefetch_lines_; ++line) {
      __builtin_prefetch(slot_begin + line * kCacheLine, 0, 3);
    }
    return header(head & (Capacity - 1))->seq.load(std::memory_order_acquire) == head + 1;
  }

  SlotHeader* header(std::size_t index) noexcept {
    return std::launder(reinterpret_cast<SlotHeader*>(slots_ + index * kSlotSize));
  }
  const SlotHeader* header(std::size_t index) const noexcept {
    return std::launder(reinterpret_cast<const SlotHeader*>(slots_ + index * kSlotSize));
  }
  std::byte* payload(std::size_t index) noexcept {
    return slots_ + index * kSlotSize + kPayloadOffset;
  }

  void check_layout(std::string_view segment, std::string_view name) const {
    if (magic_ != kMagic || capacity_ != Capacity || slot_size_ != kSlotSize ||
        value_size_ != sizeof(T) || value_align_ != alignof(T)) {
      detail::throw_ring_layout_mismatch(segment, name, magic_ == kMagic,
                                         {capacity_, value_size_, value_align_},
                                         {Capacity, sizeof(T), alignof(T)});
    }
  }

  // Descriptor: written by the constructor, read-only afterwards.
  alignas(kCacheLine) std::uint64_t magic_ = kMagic;
  std::uint64_t capacity_ = Capacity;
  std::uint64_t slot_size_ = kSlotSize;
  std::uint64_t value_size_ = sizeof(T);
  std::uint64_t value_align_ = alignof(T);

  // Producer's line: tail (read by others only in size_approx) and the producer's private copy
  // of head.
  alignas(kCacheLine) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t head_cache_ = 0;

  // Consumer's line: head (written by the consumer, read by the producer when it seems full).
  alignas(kCacheLine) std::atomic<std::uint64_t> head_{0};
  std::size_t prefetch_lines_ = 0;  // consumer's: lines after the header of its last message

  WaitWord not_empty_;  // the consumer sleeps here, the producer notifies
  WaitWord not_full_;   // the producer sleeps here, the consumer notifies

  // Capacity slots of kSlotSize bytes: a SlotHeader, then the message bytes.
  alignas(kSlotAlign) std::byte slots_[Capacity * kSlotSize];
};

}  // namespace macrostep::ipc
