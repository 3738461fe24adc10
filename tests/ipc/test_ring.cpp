// SpscRing between threads: order, wrap-around, back-pressure, blocking and timed operations,
// the futex path, a 10^7-message stress test and oversubscription (run under TSan as well).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "ipc_test_support.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/spsc_ring.hpp"
#include "macrostep/ipc/wait.hpp"

namespace {

using namespace std::chrono_literals;
using macrostep::ipc::kCacheLine;
using macrostep::ipc::SegmentErrc;
using macrostep::ipc::SegmentError;
using macrostep::ipc::SegmentOptions;
using macrostep::ipc::SharedSegment;
using macrostep::ipc::SpscRing;
using macrostep::ipc::WaitClock;
using macrostep::ipc::WaitPolicy;
using macrostep::ipc::WaitStatus;
using macrostep::ipc::testing::CpuRestriction;
using macrostep::ipc::testing::kThreadSanitizer;
using macrostep::ipc::testing::message_count;

struct Msg {
  std::uint64_t seq;
  std::uint64_t check;
};

constexpr std::uint64_t mix(std::uint64_t x) {  // splitmix64: a checksum that depends on seq
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Msg make(std::uint64_t i) {
  return Msg{i, mix(i)};
}

SharedSegment make_segment(std::size_t bytes = std::size_t{4} << 20) {
  SegmentOptions options;
  options.region_bytes = bytes;
  return SharedSegment::create(options);
}

// ---- layout -------------------------------------------------------------------------------------

TEST(SpscRingLayout, IndicesWaitWordsAndSlotsEachOnTheirOwnCacheLines) {
  using Small = SpscRing<Msg, 8>;
  static_assert(alignof(Small) == kCacheLine);
  static_assert(Small::kSlotSize == kCacheLine);
  // descriptor, producer line, consumer line, two wait words, then the slots
  EXPECT_EQ(sizeof(Small), 5 * kCacheLine + 8 * kCacheLine);

  using Wide = SpscRing<std::array<std::byte, 100>, 4>;
  static_assert(Wide::kSlotSize == 2 * kCacheLine);
  EXPECT_EQ(sizeof(Wide), 5 * kCacheLine + 4 * 2 * kCacheLine);
}

TEST(SpscRingLayout, TheSlotHeaderSharesTheFirstCacheLineWithTheMessage) {
  // The consumer waits on the slot's sequence number, so a message of up to 48 bytes arrives
  // with the same cache-line transfer that announces it.
  using Small = SpscRing<Msg, 8>;
  EXPECT_EQ(Small::kPayloadOffset, 16u);
  EXPECT_LE(Small::kPayloadOffset + sizeof(Msg), kCacheLine);
  struct alignas(32) Wide32 {
    double v[4];
  };
  static_assert(SpscRing<Wide32, 4>::kPayloadOffset == 32);  // the message keeps its alignment
}

TEST(SpscRingLayout, AConstructedRingIsEmptyWhateverTheMemoryHeld) {
  // Slots start with sequence 0, which no message has: garbage in fresh memory (not zero-filled
  // like a new shared-memory segment) must not look like a message.
  using Ring = SpscRing<Msg, 4>;
  auto storage = std::make_unique<std::array<std::byte, sizeof(Ring) + kCacheLine>>();
  std::memset(storage->data(), 0xA5, storage->size());
  void* place = storage->data();
  std::size_t space = storage->size();
  ASSERT_NE(std::align(alignof(Ring), sizeof(Ring), place, space), nullptr);
  auto* ring = new (place) Ring;
  Msg out{};
  EXPECT_FALSE(ring->try_pop(out));
  ASSERT_TRUE(ring->try_push(make(7)));
  ASSERT_TRUE(ring->try_pop(out));
  EXPECT_EQ(out.seq, 7u);
  EXPECT_FALSE(ring->try_pop(out));
  ring->~Ring();
}

TEST(SpscRingLayout, AttachChecksThatBothSidesAgreeOnTheMessageType) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 8>::create(s, "cmd");
  SharedSegment t = SharedSegment::attach(s.name());
  auto& same = SpscRing<Msg, 8>::attach(t, "cmd");
  EXPECT_NE(static_cast<void*>(&same), static_cast<void*>(&ring));
  ASSERT_TRUE(ring.try_push(make(5)));
  Msg out{};
  ASSERT_TRUE(same.try_pop(out));  // the second mapping sees the same ring
  EXPECT_EQ(out.seq, 5u);

  try {
    SpscRing<Msg, 4>::attach(t, "cmd");
    ADD_FAILURE() << "capacity mismatch accepted";
  } catch (const SegmentError& e) {
    EXPECT_EQ(e.code(), SegmentErrc::kBadRegion);
    EXPECT_NE(std::string(e.what()).find("disagree on the message type"), std::string::npos)
        << e.what();
  }
  struct Other {
    std::uint64_t a, b, c;
  };
  EXPECT_THROW((SpscRing<Other, 8>::attach(t, "cmd")), SegmentError);
  EXPECT_THROW((SpscRing<Msg, 8>::attach(t, "missing")), SegmentError);
  s.allocate("not-a-ring", sizeof(SpscRing<Msg, 8>));
  EXPECT_THROW((SpscRing<Msg, 8>::attach(t, "not-a-ring")), SegmentError);
}

// ---- single-threaded behaviour ------------------------------------------------------------------

TEST(SpscRing, PopsInPushOrderAndRefusesPushWhenFull) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 8>::create(s, "r");
  Msg out{};
  EXPECT_FALSE(ring.try_pop(out));
  for (std::uint64_t i = 0; i < 8; ++i) ASSERT_TRUE(ring.try_push(make(i)));
  EXPECT_EQ(ring.size_approx(), 8u);
  EXPECT_FALSE(ring.try_push(make(8)));  // back-pressure: full
  EXPECT_FALSE(ring.try_push(make(8)));
  for (std::uint64_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out.seq, i);
    EXPECT_EQ(out.check, mix(i));
  }
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_EQ(ring.size_approx(), 0u);
}

TEST(SpscRing, WrapsAroundManyTimes) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 8>::create(s, "r");
  std::uint64_t pushed = 0;
  std::uint64_t popped = 0;
  // Batches of 1..8 and partial drains move the indices through every slot offset.
  for (int round = 0; round < 20'000; ++round) {
    const int batch = 1 + round % 8;
    for (int k = 0; k < batch && ring.try_push(make(pushed)); ++k) ++pushed;
    const int drain = 1 + (round * 5) % 8;
    Msg out{};
    for (int k = 0; k < drain && ring.try_pop(out); ++k) {
      ASSERT_EQ(out.seq, popped);
      ASSERT_EQ(out.check, mix(popped));
      ++popped;
    }
    ASSERT_LE(pushed - popped, 8u);
  }
  EXPECT_GT(popped, 1000u * 8);  // wrapped more than a thousand times
}

// A message type with a used prefix: a count, then `count` values of a 512-byte array.
struct VarMsg {
  std::uint64_t seq;
  std::uint32_t count;
  std::uint32_t check;
  std::uint64_t values[64];
  std::size_t wire_bytes() const { return offsetof(VarMsg, values) + count * sizeof(values[0]); }
};

VarMsg make_var(std::uint64_t i) {
  VarMsg m;
  m.seq = i;
  m.count = static_cast<std::uint32_t>(mix(i) % 65);
  for (std::uint32_t k = 0; k < m.count; ++k) m.values[k] = mix(i * 64 + k);
  m.check = static_cast<std::uint32_t>(mix(~i));
  return m;
}

bool matches(const VarMsg& m, std::uint64_t i) {
  const VarMsg e = make_var(i);
  if (m.seq != e.seq || m.count != e.count || m.check != e.check) return false;
  for (std::uint32_t k = 0; k < e.count; ++k) {
    if (m.values[k] != e.values[k]) return false;
  }
  return true;
}

TEST(SpscRing, VariableLengthMessagesCopyOnlyTheirWireBytes) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<VarMsg, 4>::create(s, "var");
  static_assert(sizeof(VarMsg) == 528);
  EXPECT_EQ(macrostep::ipc::wire_bytes_of(make_var(0)), 16 + make_var(0).count * 8);
  VarMsg in{};
  in.seq = 1;
  in.count = 3;
  for (std::uint64_t k = 0; k < 64; ++k) in.values[k] = 100 + k;
  ASSERT_TRUE(ring.try_push(in));
  VarMsg out;
  std::memset(&out, 0xEE, sizeof out);
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out.seq, 1u);
  EXPECT_EQ(out.count, 3u);
  EXPECT_EQ(out.values[0], 100u);
  EXPECT_EQ(out.values[2], 102u);
  // Beyond the wire bytes `out` keeps what it held: those bytes never went through the ring.
  EXPECT_EQ(out.values[3], 0xEEEE'EEEE'EEEE'EEEEull);
  EXPECT_EQ(out.values[63], 0xEEEE'EEEE'EEEE'EEEEull);
}

TEST(SpscRing, NoSystemCallWhileNobodySleeps) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 8>::create(s, "r");
  const WaitPolicy policy = WaitPolicy::spinning();
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    ring.push(make(i), policy);
    ASSERT_EQ(ring.pop(policy).seq, i);
  }
  EXPECT_EQ(ring.not_empty_word().wake_calls(), 0u);
  EXPECT_EQ(ring.not_full_word().wake_calls(), 0u);
  EXPECT_EQ(ring.not_empty_word().sleep_calls(), 0u);
  EXPECT_EQ(ring.not_full_word().sleep_calls(), 0u);
}

TEST(SpscRing, TimedOperationsReportTimeouts) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 4>::create(s, "r");
  Msg out{7, 7};
  EXPECT_EQ(ring.pop_for(out, WaitPolicy::sleeping(), 20ms), WaitStatus::kTimedOut);
  EXPECT_EQ(ring.pop_for(out, WaitPolicy::spinning(100), 1ms), WaitStatus::kTimedOut);
  EXPECT_EQ(ring.pop_until(out, WaitPolicy::sleeping(), WaitClock::now() - 1s),
            WaitStatus::kTimedOut);
  EXPECT_EQ(out.seq, 7u);  // untouched
  EXPECT_EQ(ring.not_empty_word().sleepers(), 0u);

  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.try_push(make(i)));
  EXPECT_EQ(ring.push_for(make(4), WaitPolicy::sleeping(), 20ms), WaitStatus::kTimedOut);
  EXPECT_EQ(ring.size_approx(), 4u);  // not appended
  EXPECT_EQ(ring.pop_for(out, WaitPolicy::sleeping(), 20ms), WaitStatus::kReady);
  EXPECT_EQ(out.seq, 0u);
  EXPECT_EQ(ring.push_for(make(4), WaitPolicy::sleeping(), 20ms), WaitStatus::kReady);
}

// ---- blocking between threads -------------------------------------------------------------------

class SpscRingBlocking : public ::testing::TestWithParam<bool> {
 protected:
  WaitPolicy policy() const { return GetParam() ? WaitPolicy::sleeping() : WaitPolicy{}; }
  bool sleeping() const { return GetParam(); }
};

TEST_P(SpscRingBlocking, BlockedPusherResumesWhenTheConsumerPops) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 4>::create(s, "r");
  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.try_push(make(i)));
  ASSERT_FALSE(ring.try_push(make(99)));

  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    ring.push(make(99), policy());
    pushed.store(true, std::memory_order_release);
  });
  if (sleeping()) {
    // The pusher is asleep in the futex of not_full.
    while (ring.not_full_word().sleepers() == 0) std::this_thread::yield();
  }
  EXPECT_FALSE(pushed.load(std::memory_order_acquire));  // the ring is full: it cannot be done
  Msg out{};
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out.seq, 0u);
  producer.join();
  EXPECT_TRUE(pushed.load());
  for (std::uint64_t expect : {1u, 2u, 3u, 99u}) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out.seq, expect);
    EXPECT_EQ(out.check, mix(expect));
  }
  if (sleeping()) {
    EXPECT_EQ(ring.not_full_word().wake_calls(), 1u);
  }
}

TEST_P(SpscRingBlocking, WaitingConsumerIsWokenByAPush) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, 4>::create(s, "r");
  Msg out{};
  std::thread consumer([&] { ring.pop(out, policy()); });
  if (sleeping()) {
    while (ring.not_empty_word().sleepers() == 0) std::this_thread::yield();
    EXPECT_EQ(ring.not_empty_word().wake_calls(), 0u);
  }
  ASSERT_TRUE(ring.try_push(make(42)));
  consumer.join();
  EXPECT_EQ(out.seq, 42u);
  EXPECT_EQ(out.check, mix(42));
  if (sleeping()) {
    EXPECT_EQ(ring.not_empty_word().wake_calls(), 1u);  // one FUTEX_WAKE
    EXPECT_GE(ring.not_empty_word().sleep_calls(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, SpscRingBlocking, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Sleeping" : "Spinning"; });

// ---- stress -------------------------------------------------------------------------------------

// Producer and consumer threads pass `n` messages; every message is checked for its sequence
// number and checksum, and the sum of checksums is compared at the end.
template <std::size_t Capacity>
void run_stress(std::uint64_t n, WaitPolicy producer_policy, WaitPolicy consumer_policy) {
  SharedSegment s = make_segment();
  auto& ring = SpscRing<Msg, Capacity>::create(s, "stress");
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) ring.push(make(i), producer_policy);
  });
  std::uint64_t out_of_order = 0;
  std::uint64_t sum = 0;
  std::uint64_t expected_sum = 0;
  Msg m{};
  for (std::uint64_t i = 0; i < n; ++i) {
    ring.pop(m, consumer_policy);
    out_of_order += (m.seq != i || m.check != mix(i)) ? 1 : 0;
    sum += m.check;
    expected_sum += mix(i);
  }
  producer.join();
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(sum, expected_sum);
  EXPECT_EQ(ring.size_approx(), 0u);
  EXPECT_FALSE(ring.try_pop(m));
}

TEST(SpscRingStress, MillionsOfMessagesBetweenTwoThreads) {
  // 4·10^6 in release and ASan builds, 10^6 under TSan (MACROSTEP_IPC_STRESS_MESSAGES overrides).
  const std::uint64_t n = message_count(4'000'000, 1'000'000);
  run_stress<1024>(n, WaitPolicy::adaptive(2), WaitPolicy::adaptive(2));
}

TEST(SpscRingStress, VariableLengthMessagesBetweenTwoThreads) {
  // Messages of 16..528 bytes (1..9 cache lines) through a small ring: every one arrives whole.
  const std::uint64_t n = kThreadSanitizer ? 50'000 : 400'000;
  SharedSegment s = make_segment();
  auto& ring = SpscRing<VarMsg, 8>::create(s, "var-stress");
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < n; ++i) ring.push(make_var(i), WaitPolicy::adaptive(2));
  });
  std::uint64_t bad = 0;
  auto m = std::make_unique<VarMsg>();
  for (std::uint64_t i = 0; i < n; ++i) {
    ring.pop(*m, WaitPolicy::adaptive(2));
    bad += matches(*m, i) ? 0 : 1;
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
}

TEST(SpscRingStress, SleepingWaitersOnATinyRingLoseNoWakeUp) {
  // Capacity 2 and sleep-at-once on both sides: the ring is full or empty almost all the time,
  // so nearly every operation goes through the futex protocol. A lost wake-up hangs here.
  const std::uint64_t n = kThreadSanitizer ? 20'000 : 200'000;
  run_stress<2>(n, WaitPolicy::sleeping(), WaitPolicy::sleeping());
}

TEST(SpscRingStress, SpinningProducerSleepingConsumer) {
  const std::uint64_t n = kThreadSanitizer ? 20'000 : 200'000;
  run_stress<4>(n, WaitPolicy::spinning(64), WaitPolicy::sleeping());
  run_stress<4>(n, WaitPolicy::sleeping(), WaitPolicy::spinning(64));
}

// ---- oversubscription ---------------------------------------------------------------------------

// 8 producer/consumer pairs (16 threads) on 2 CPUs, as 12 subsystem processes on a 2-core
// machine would be. Completion is the check; no time is asserted.
void run_oversubscribed(bool adaptive) {
  CpuRestriction two_cpus(2);  // threads started below inherit the mask
  constexpr int kPairs = 8;
  // A spinning waiter whose partner is descheduled burns its whole budget before it sleeps,
  // so the bounded-spinning variant passes fewer messages.
  const std::uint64_t n = kThreadSanitizer ? 5'000 : (adaptive ? 100'000 : 20'000);
  const WaitPolicy policy =
      adaptive ? WaitPolicy::adaptive(2 * kPairs, static_cast<std::size_t>(two_cpus.cpus()))
               : WaitPolicy::spinning();
  if (adaptive) {
    EXPECT_EQ(policy.spin_iterations, 0u);  // 16 threads > 2 CPUs: sleep at once
  }

  SharedSegment s = make_segment();
  std::vector<SpscRing<Msg, 16>*> rings;
  for (int p = 0; p < kPairs; ++p) {
    rings.push_back(&SpscRing<Msg, 16>::create(s, std::string("pair") + std::to_string(p)));
  }
  std::vector<std::uint64_t> errors(kPairs, 0);
  std::vector<std::thread> threads;
  for (int p = 0; p < kPairs; ++p) {
    auto& ring = *rings[static_cast<std::size_t>(p)];
    // n is a constant expression in the TSan build only: an init-capture is right in both.
    threads.emplace_back([&ring, count = n, policy] {
      for (std::uint64_t i = 0; i < count; ++i) ring.push(make(i), policy);
    });
    threads.emplace_back([&ring, count = n, policy, &err = errors[static_cast<std::size_t>(p)]] {
      Msg m{};
      for (std::uint64_t i = 0; i < count; ++i) {
        ring.pop(m, policy);
        err += (m.seq != i || m.check != mix(i)) ? 1 : 0;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int p = 0; p < kPairs; ++p) EXPECT_EQ(errors[static_cast<std::size_t>(p)], 0u) << p;
}

TEST(SpscRingOversubscribed, EightPairsOnTwoCpusWithAdaptiveWaiting) {
  run_oversubscribed(true);
}

TEST(SpscRingOversubscribed, EightPairsOnTwoCpusWithBoundedSpinning) {
  run_oversubscribed(false);
}

}  // namespace
