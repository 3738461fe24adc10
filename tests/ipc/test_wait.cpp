// WaitPolicy and WaitWord: adaptive spin budget, timeouts, no wake-up syscall without sleepers,
// yields that end when the CPU has other work, and a ping-pong through the sleeping path that
// would hang on a lost wake-up.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "ipc_test_support.hpp"
#include "macrostep/ipc/wait.hpp"

namespace {

using namespace std::chrono_literals;
using macrostep::ipc::available_cpus;
using macrostep::ipc::WaitClock;
using macrostep::ipc::WaitPolicy;
using macrostep::ipc::WaitStatus;
using macrostep::ipc::WaitWord;
using macrostep::ipc::testing::kThreadSanitizer;

TEST(WaitPolicy, SleepsAtOnceWhenProcessesOutnumberCpus) {
  EXPECT_EQ(WaitPolicy::adaptive(3, 2).spin_iterations, 0u);
  EXPECT_EQ(WaitPolicy::adaptive(13, 2).spin_iterations, 0u);
  EXPECT_EQ(WaitPolicy::adaptive(2, 2).spin_iterations, WaitPolicy::kDefaultSpinIterations);
  EXPECT_EQ(WaitPolicy::adaptive(1, 1).spin_iterations, WaitPolicy::kDefaultSpinIterations);
  EXPECT_GT(WaitPolicy::kDefaultSpinIterations, 0u);
  EXPECT_EQ(WaitPolicy::sleeping().spin_iterations, 0u);
  EXPECT_EQ(WaitPolicy::sleeping().yield_iterations, 0u);
  EXPECT_EQ(WaitPolicy::spinning(5).spin_iterations, 5u);
}

// The master's and the workers' policy: a short spin and then yields while the runs fit.
TEST(WaitPolicy, SpinYieldSleepSpinsBrieflyThenYieldsOnlyWhenTheRunsFit) {
  const WaitPolicy fits = WaitPolicy::spin_yield_sleep(2, 2);
  EXPECT_EQ(fits.spin_iterations, WaitPolicy::kShortSpinIterations);
  EXPECT_LT(WaitPolicy::kShortSpinIterations, WaitPolicy::kDefaultSpinIterations);
  EXPECT_EQ(fits.yield_iterations, WaitPolicy::kYieldIterations);
  EXPECT_GT(WaitPolicy::kYieldIterations, 0u);
  const WaitPolicy over = WaitPolicy::spin_yield_sleep(3, 2);
  EXPECT_EQ(over.spin_iterations, 0u);
  EXPECT_EQ(over.yield_iterations, 0u);
}

TEST(WaitPolicy, AvailableCpusIsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(available_cpus(), static_cast<std::size_t>(CPU_COUNT(&set)));
  macrostep::ipc::testing::CpuRestriction one(1);
  EXPECT_EQ(available_cpus(), 1u);
  EXPECT_EQ(WaitPolicy::adaptive(2).spin_iterations, 0u);
}

TEST(WaitWord, ReturnsAtOnceWhenTheConditionHolds) {
  WaitWord w;
  EXPECT_EQ(w.wait([] { return true; }, WaitPolicy::sleeping()), WaitStatus::kReady);
  EXPECT_EQ(w.sleep_calls(), 0u);
  EXPECT_EQ(w.sleepers(), 0u);
}

TEST(WaitWord, TimesOutAtTheDeadline) {
  WaitWord w;
  EXPECT_EQ(w.wait([] { return false; }, WaitPolicy::sleeping(), WaitClock::now() + 10ms),
            WaitStatus::kTimedOut);
  EXPECT_GE(w.sleep_calls(), 1u);
  EXPECT_EQ(w.sleepers(), 0u);
  EXPECT_EQ(w.wait([] { return false; }, WaitPolicy::spinning(1000), WaitClock::now() + 5ms),
            WaitStatus::kTimedOut);
  EXPECT_EQ(w.wait([] { return false; }, WaitPolicy{0, 3}, WaitClock::now() - 1s),
            WaitStatus::kTimedOut);
}

TEST(WaitWord, NotifyWithoutSleepersMakesNoSystemCall) {
  WaitWord w;
  for (int i = 0; i < 100'000; ++i) w.notify();
  EXPECT_EQ(w.wake_calls(), 0u);
}

TEST(WaitWord, NotifyWakesASleeper) {
  WaitWord w;
  std::atomic<bool> flag{false};
  WaitStatus status = WaitStatus::kTimedOut;
  std::thread waiter([&] {
    status = w.wait([&] { return flag.load(std::memory_order_acquire); }, WaitPolicy::sleeping());
  });
  while (w.sleepers() == 0) std::this_thread::yield();
  flag.store(true, std::memory_order_release);
  w.notify();
  waiter.join();
  EXPECT_EQ(status, WaitStatus::kReady);
  EXPECT_EQ(w.wake_calls(), 1u);
}

// A yield that ran other work on the CPU ends the yields: with a busy thread on the waiter's only
// CPU, a waiter allowed a million yields sleeps after the first one that handed the CPU over
// (each of those would last the busy thread's time slice: the wait would take most of an hour).
// The busy thread notifies once it sees the waiter asleep.
TEST(WaitWord, AYieldThatRanOtherWorkEndsTheYields) {
  macrostep::ipc::testing::CpuRestriction one(1);  // the busy thread inherits it
  WaitWord w;
  std::atomic<bool> flag{false};
  std::thread busy([&] {
    while (w.sleepers() == 0) {
    }
    flag.store(true, std::memory_order_release);
    w.notify();
  });
  const WaitStatus status =
      w.wait([&] { return flag.load(std::memory_order_acquire); }, WaitPolicy{0, 1'000'000});
  busy.join();
  EXPECT_EQ(status, WaitStatus::kReady);
  EXPECT_GE(w.sleep_calls(), 1u);
}

// Two threads hand a token back and forth, each sleeping at once while waiting: every round
// trip runs the whole sleep/wake protocol twice, with the notifier racing the waiter's
// announcement. A single lost wake-up hangs the test.
TEST(WaitWord, SleepingPingPongLosesNoWakeUp) {
  const std::uint64_t rounds = kThreadSanitizer ? 20'000 : 200'000;
  WaitWord to_b;
  WaitWord to_a;
  std::atomic<std::uint64_t> ball{0};  // even: A's turn, odd: B's turn
  std::thread b([&] {
    for (std::uint64_t i = 0; i < rounds; ++i) {
      to_b.wait([&] { return ball.load(std::memory_order_acquire) == 2 * i + 1; },
                WaitPolicy::sleeping());
      ball.store(2 * i + 2, std::memory_order_release);
      to_a.notify();
    }
  });
  for (std::uint64_t i = 0; i < rounds; ++i) {
    ball.store(2 * i + 1, std::memory_order_release);
    to_b.notify();
    to_a.wait([&] { return ball.load(std::memory_order_acquire) == 2 * i + 2; },
              WaitPolicy::sleeping());
  }
  b.join();
  EXPECT_EQ(ball.load(), 2 * rounds);
}

}  // namespace
