// The batched wake-up of the process runtime (ipc/.../protocol.hpp, "Waking"):
// ArrivalCounter (one waiter woken by the last of many arrivals) and rings whose consumers sleep
// on one shared WaitWord that the producer notifies once per batch of quiet pushes. The stress
// tests run more waiting threads than CPUs with sleeping waiters: a lost wake-up hangs them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ipc_test_support.hpp"
#include "macrostep/ipc/arrival_counter.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/spsc_ring.hpp"
#include "macrostep/ipc/wait.hpp"

namespace {

using namespace std::chrono_literals;
using macrostep::ipc::ArrivalCounter;
using macrostep::ipc::SegmentOptions;
using macrostep::ipc::SharedSegment;
using macrostep::ipc::SpscRing;
using macrostep::ipc::WaitClock;
using macrostep::ipc::WaitPolicy;
using macrostep::ipc::WaitStatus;
using macrostep::ipc::WaitWord;
using macrostep::ipc::testing::CpuRestriction;
using macrostep::ipc::testing::kThreadSanitizer;

TEST(ArrivalCounter, IsCompleteWhenNothingIsOutstanding) {
  ArrivalCounter c;
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.wait(WaitPolicy::sleeping()), WaitStatus::kReady);
  EXPECT_EQ(c.word().sleep_calls(), 0u);
}

TEST(ArrivalCounter, ArrivalsMakeNoSystemCallWhileNobodySleeps) {
  ArrivalCounter c;
  for (std::uint32_t round = 1; round <= 10'000; ++round) {
    c.expect_more(3);
    EXPECT_FALSE(c.complete());
    c.arrive();
    c.arrive();
    EXPECT_FALSE(c.complete());
    c.arrive();
    ASSERT_TRUE(c.complete());
  }
  EXPECT_EQ(c.arrived(), 30'000u);
  EXPECT_EQ(c.word().wake_calls(), 0u);
}

TEST(ArrivalCounter, TimesOutWhileArrivalsAreMissing) {
  ArrivalCounter c;
  c.expect_more(2);
  c.arrive();
  EXPECT_EQ(c.wait(WaitPolicy::sleeping(), WaitClock::now() + 10ms), WaitStatus::kTimedOut);
  EXPECT_EQ(c.wait(WaitPolicy::spinning(100), WaitClock::now() + 1ms), WaitStatus::kTimedOut);
  EXPECT_EQ(c.word().sleepers(), 0u);
  // Work that could not be handed out is taken back: then nothing is outstanding.
  c.expect(c.target() - 1);
  EXPECT_TRUE(c.complete());
}

// Counts are compared as a signed 32-bit difference (they wrap): up to 2^31 - 1 outstanding
// arrivals are "not yet", a target behind the count is "done".
TEST(ArrivalCounter, ComparesTheCountsAsASignedDifference) {
  ArrivalCounter c;
  c.expect(0x7FFF'FFFFu);
  EXPECT_FALSE(c.complete());
  c.expect(0xFFFF'FFFFu);  // one behind 0 modulo 2^32
  EXPECT_TRUE(c.complete());
}

// A waiter that raised the target for a second batch before the first one has come in waits
// for both; the arrival that completes the first batch does not wake it.
TEST(ArrivalCounter, WaitsForTheRaisedTarget) {
  ArrivalCounter c;
  std::atomic<int> stage{0};
  c.expect_more(2);
  c.expect_more(2);
  std::thread worker([&] {
    for (int i = 0; i < 4; ++i) {
      while (stage.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      c.arrive();
    }
  });
  std::thread waiter([&] { EXPECT_EQ(c.wait(WaitPolicy::sleeping()), WaitStatus::kReady); });
  while (c.word().sleepers() == 0) std::this_thread::yield();
  stage.store(2, std::memory_order_release);  // the first batch comes in
  while (c.arrived() < 2) std::this_thread::yield();
  EXPECT_FALSE(c.complete());
  EXPECT_EQ(c.word().wake_calls(), 0u);  // not woken by the first batch's last arrival
  stage.store(4, std::memory_order_release);
  waiter.join();
  worker.join();
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.word().wake_calls(), 1u);
}

// ---- a master and its workers, as threads ---------------------------------------------------

struct Job {
  std::uint64_t round;
  std::uint64_t value;
};
using JobRing = SpscRing<Job, 4>;

// The macro-step pattern of the process runtime with `workers` threads on 2 CPUs: per round the
// master raises the counter's target, pushes one job quietly into every worker's ring, rings the
// shared bell once and sleeps until the last worker's arrival wakes it; the workers sleep on the
// bell (not on their rings) and answer through their own reply ring. Checks every reply, and
// that the bell and the counter cost at most one FUTEX_WAKE per round each.
void run_batches(std::size_t workers, std::uint64_t rounds, const WaitPolicy& worker_policy,
                 const WaitPolicy& master_policy) {
  CpuRestriction two_cpus(2);  // inherited by the threads started below
  SegmentOptions options;
  options.region_bytes = std::size_t{1} << 20;
  SharedSegment segment = SharedSegment::create(options);
  auto& bell = segment.construct<WaitWord>("bell");
  auto& replies = segment.construct<ArrivalCounter>("replies");
  std::vector<JobRing*> jobs, answers;
  for (std::size_t w = 0; w < workers; ++w) {
    jobs.push_back(&JobRing::create(segment, "job." + std::to_string(w)));
    answers.push_back(&JobRing::create(segment, "answer." + std::to_string(w)));
  }
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> bad{0};
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      Job job{};
      for (std::uint64_t r = 0; r < rounds; ++r) {
        while (jobs[w]->pop_until(job, bell, worker_policy, WaitClock::now() + 1s) !=
               WaitStatus::kReady) {
        }
        if (job.round != r || job.value != r * 1000 + w) bad.fetch_add(1);
        answers[w]->push_quiet(Job{job.round, job.value + 1}, worker_policy);
        replies.arrive();
      }
    });
  }
  for (std::uint64_t r = 0; r < rounds; ++r) {
    replies.expect_more(static_cast<std::uint32_t>(workers));
    for (std::size_t w = 0; w < workers; ++w) {
      ASSERT_TRUE(jobs[w]->try_push_quiet(Job{r, r * 1000 + w}));
    }
    bell.notify();
    ASSERT_EQ(replies.wait(master_policy), WaitStatus::kReady);
    for (std::size_t w = 0; w < workers; ++w) {
      Job answer{};
      ASSERT_TRUE(answers[w]->try_pop(answer)) << "round " << r << " worker " << w;
      EXPECT_EQ(answer.round, r);
      EXPECT_EQ(answer.value, r * 1000 + w + 1);
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(replies.arrived(), rounds * workers);
  EXPECT_LE(bell.wake_calls(), rounds);
  EXPECT_LE(replies.word().wake_calls(), rounds);
  std::cout << workers << " workers, " << rounds << " rounds: bell FUTEX_WAKEs "
            << bell.wake_calls() << ", worker sleeps " << bell.sleep_calls()
            << ", counter FUTEX_WAKEs " << replies.word().wake_calls() << ", master sleeps "
            << replies.word().sleep_calls() << "\n";
}

TEST(Broadcast, SleepingWorkersMoreThanCpusLoseNoWakeUp) {
  run_batches(8, kThreadSanitizer ? 500 : 5'000, WaitPolicy::sleeping(), WaitPolicy::sleeping());
}

TEST(Broadcast, SpinningAndYieldingWaitersLoseNoWakeUp) {
  run_batches(3, kThreadSanitizer ? 500 : 5'000, WaitPolicy{64, 4}, WaitPolicy{64, 0});
}

}  // namespace
