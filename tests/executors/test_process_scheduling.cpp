// Telling a hung worker from one that the machine gives no CPU (process_scheduling.hpp; the
// stat line itself: tests/ipc/test_proc_stat.cpp): the /proc reading on real processes (a
// spinning, a stopped and a sleeping child), the rule, and the progress check of ProcessExecutor
// on thread workers (thread_workers.hpp) held still while the supervisor reports how they were
// scheduled; and workers starved by real higher-priority load.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/child_processes.hpp"
#include "../support/test_chain.hpp"
#include "call_order_suite.hpp"
#include "explicit_options.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/executors/process_scheduling.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"
#include "thread_workers.hpp"

namespace macrostep::testing {
namespace {

using executors::SchedulingSample;
using namespace std::chrono_literals;

TEST(ProcessScheduling, WaitedForCpuOnlyWhenRunnableWithLessThanHalfTheWindow) {
  const SchedulingSample before{1s, true};
  EXPECT_TRUE(executors::waited_for_cpu(before, {1s + 100ms, true}, 1s));
  EXPECT_FALSE(executors::waited_for_cpu(before, {1s + 600ms, true}, 1s));  // spins: hangs
  EXPECT_FALSE(executors::waited_for_cpu(before, {1s, false}, 1s));         // sleeps or stopped
  EXPECT_FALSE(executors::waited_for_cpu(before, {1s, true}, 0s));
}

// Samples pid until `done` holds for a sample or 10 s have passed; the last sample.
template <class Done>
std::optional<SchedulingSample> sample_scheduling_until(pid_t pid, Done done) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  std::optional<SchedulingSample> s;
  do {
    s = executors::read_scheduling(pid);
    if (s && done(*s)) break;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() < until);
  return s;
}

// A forked child that spins or sleeps until it is killed: by end(), by the destructor (a failed
// assertion returns early) or, should this process die first, by the kernel (fork_tied).
class IdleChild {
 public:
  explicit IdleChild(bool spin) : pid_(fork_tied()) {
    if (pid_ != 0) return;
    if (spin) {
      std::atomic<unsigned long> n{0};
      for (;;) n.fetch_add(1, std::memory_order_relaxed);
    }
    for (;;) pause();
  }
  ~IdleChild() { end(); }
  IdleChild(const IdleChild&) = delete;
  IdleChild& operator=(const IdleChild&) = delete;

  pid_t pid() const { return pid_; }
  void end() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_;
};

TEST(ProcessScheduling, ReadsASpinningAStoppedAndASleepingChild) {
  IdleChild spinning(true);
  const pid_t spinner = spinning.pid();
  ASSERT_GT(spinner, 0);
  const auto first = executors::read_scheduling(spinner);
  ASSERT_TRUE(first);
  const auto spun = sample_scheduling_until(spinner, [&](const SchedulingSample& s) {
    return s.runnable && s.cpu_time > first->cpu_time;
  });
  ASSERT_TRUE(spun);
  EXPECT_TRUE(spun->runnable);
  EXPECT_GT(spun->cpu_time, first->cpu_time);
  ASSERT_EQ(kill(spinner, SIGSTOP), 0);
  const auto stopped =
      sample_scheduling_until(spinner, [](const SchedulingSample& s) { return !s.runnable; });
  ASSERT_TRUE(stopped);
  EXPECT_FALSE(stopped->runnable);
  spinning.end();
  EXPECT_FALSE(executors::read_scheduling(spinner));  // reaped: nothing to read

  IdleChild sleeping(false);
  ASSERT_GT(sleeping.pid(), 0);
  const auto asleep = sample_scheduling_until(
      sleeping.pid(), [](const SchedulingSample& s) { return !s.runnable; });
  ASSERT_TRUE(asleep);
  EXPECT_FALSE(asleep->runnable);
}

// A ProcessExecutor over thread workers with a short hang timeout; worker 1 is held still from
// the third accepted step on, for `hold` (forever if zero), while the supervisor reports
// `scheduling`. Returns the WorkerFailure's message, or "" if the run ended normally.
std::string run_with_still_worker(
    std::function<std::optional<SchedulingSample>(std::size_t)> scheduling,
    std::chrono::milliseconds hold, std::vector<std::string>* cpu_waits = nullptr,
    std::chrono::milliseconds poll = 10ms) {
  CallOrderSystem s;
  const schemes::SchemeOptions o = controlled(2e-3, control::Estimator::kExMD, 1e-5);
  executors::ProcessOptions po;
  po.rollback = schemes::needs_rollback(o);
  po.hang_timeout = 200ms;
  po.poll_interval = poll;
  if (cpu_waits) po.on_cpu_wait = [cpu_waits](const std::string& s) { cpu_waits->push_back(s); };
  const auto specs = executors::worker_specs(s.system, s.models, s.u0);
  auto parts = thread_workers(specs, po);
  ThreadTransport* threads = parts.threads;
  parts.supervisor->scheduling_of = std::move(scheduling);
  executors::ProcessExecutor ex(std::move(parts.parts), specs, s.system.subsystem(0).initial_time(),
                                po);
  std::jthread release;  // joined on every way out
  std::size_t accepted = 0;
  std::string failure;
  try {
    schemes::run_explicit(s.system, ex, o, [&](const schemes::AcceptedPoint&) {
      if (++accepted != 3) return;
      threads->hold(1, true);
      if (hold.count() > 0) {
        release = std::jthread([threads, hold] {
          std::this_thread::sleep_for(hold);
          threads->hold(1, false);
        });
      }
    });
  } catch (const executors::WorkerFailure& e) {
    failure = e.what();
    EXPECT_EQ(e.subsystem(), 1u);
  }
  if (release.joinable()) release.join();
  EXPECT_GE(accepted, 3u);  // the worker was held
  return failure;
}

TEST(ProcessScheduling, AWorkerWaitingForACpuIsNotTakenForAHungOne) {
  // Runnable and no CPU time: the machine, not the worker. Held for five hang timeouts.
  std::vector<std::string> told;
  const std::string failure = run_with_still_worker(
      [](std::size_t) {
        return SchedulingSample{0ns, true};
      },
      1000ms, &told);
  EXPECT_EQ(failure, "");
  // Once per wait, not per extension: told per extension, the hold alone (five timeouts) would
  // be told four times. On a slow build (TSan) either worker may also stand still for a timeout
  // before the hold and be told about then too (the supervisor says the same of both): at most
  // one report more.
  std::size_t held = 0;
  for (const auto& t : told) {
    if (!t.starts_with("subsystem 2 (pid ")) continue;
    ++held;
    EXPECT_NE(t.find("waited for a CPU"), std::string::npos) << t;
    EXPECT_NE(t.find("macro step"), std::string::npos) << t;
  }
  EXPECT_GE(held, 1u);
  EXPECT_LE(held, 2u) << ::testing::PrintToString(told);
}

TEST(ProcessScheduling, ChecksThatComeLateStillSeeAWorkerWaitingForACpu) {
  // The master looks only every 300 ms (its own checks late on a starved machine): the first
  // look past the timeout opens the window, it does not judge on an empty one.
  const std::string failure = run_with_still_worker(
      [](std::size_t) {
        return SchedulingSample{0ns, true};
      },
      1000ms, nullptr, 300ms);
  EXPECT_EQ(failure, "");
}

TEST(ProcessScheduling, AStillWorkerThatGetsItsCpuOrIsNotRunnableHangs) {
  const auto t0 = std::chrono::steady_clock::now();
  // Spinning: its CPU time grows with the wall clock.
  const std::string spinning = run_with_still_worker(
      [t0](std::size_t) {
        return SchedulingSample{std::chrono::steady_clock::now() - t0, true};
      },
      0ms);
  EXPECT_NE(spinning.find("subsystem 2 (pid "), std::string::npos) << spinning;
  EXPECT_NE(spinning.find("hangs: no model evaluation"), std::string::npos) << spinning;
  EXPECT_EQ(spinning.find("waited for a CPU"), std::string::npos) << spinning;
  // Stopped or asleep.
  std::vector<std::string> told;
  const std::string asleep = run_with_still_worker(
      [](std::size_t) {
        return SchedulingSample{0ns, false};
      },
      0ms, &told);
  EXPECT_TRUE(told.empty());
  EXPECT_NE(asleep.find("hangs"), std::string::npos) << asleep;
  EXPECT_EQ(asleep.find("waited for a CPU"), std::string::npos) << asleep;
  // Nothing known (a supervisor that cannot see the process).
  const std::string unknown = run_with_still_worker(nullptr, 0ms);
  EXPECT_NE(unknown.find("hangs"), std::string::npos) << unknown;
}

TEST(ProcessScheduling, AWorkerWaitingForACpuIsKilledAtTheLimit) {
  const std::string failure = run_with_still_worker(
      [](std::size_t) {
        return SchedulingSample{0ns, true};
      },
      0ms);
  EXPECT_NE(failure.find("extended while it waited for a CPU"), std::string::npos) << failure;
  // The extensions end at kCpuWaitLimit hang timeouts (200 ms each) of stillness.
  const auto at = failure.find("no model evaluation for ");
  ASSERT_NE(at, std::string::npos) << failure;
  EXPECT_GE(std::stod(failure.substr(at + 24)), 2.0) << failure;
}

// The real thing: a burst of higher-priority load (two busy loops at nice -20 on the CPU the
// workers are pinned to) starves them for five hang timeouts while they integrate; they are not
// taken for hung. Without the scheduling check the run failed this way every time (a worker
// "hangs: no model evaluation for 0.3 s"). Needs the right to raise a priority (root, or
// RLIMIT_NICE); skipped without it. The other CPU stays free for the tests beside this one.
TEST(ProcessScheduling, WorkersStarvedByHigherPriorityLoadAreNotKilled) {
  const auto p = test_chain(8000);
  const auto boundaries = library::equal_partition(p.size(), 2);
  const auto sys = system::make_chain_system(p, boundaries);
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = 2e-3;  // 2 macro steps of about a second each
  o.control.h = 1e-3;
  o.control.kappa_fixed = 2;
  o.control.estimator = control::Estimator::kNone;
  executors::ProcessOptions po;
  po.solver = tight_solver();
  po.executable = MACROSTEP_BINARY;
  po.hang_timeout = 300ms;
  po.poll_interval = 5ms;
  po.cpusets = {{0}, {0}};
  std::vector<std::string> told;
  po.on_cpu_wait = [&told](const std::string& s) { told.push_back(s); };
  executors::ProcessExecutor ex(
      sys,
      library::chain_segment_descriptions(std::make_shared<const library::ChainParameters>(p),
                                          boundaries),
      sys.initial_couplings(), po);
  std::vector<std::unique_ptr<IdleChild>> hogs;
  std::jthread release;  // ends the hogs after the burst
  bool permitted = true;
  std::size_t accepted = 0;
  schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint&) {
    if (++accepted != 1) return;
    for (int k = 0; k < 2 && permitted; ++k) {
      hogs.push_back(std::make_unique<IdleChild>(true));
      cpu_set_t zero;
      CPU_ZERO(&zero);
      CPU_SET(0, &zero);
      permitted = sched_setaffinity(hogs.back()->pid(), sizeof zero, &zero) == 0 &&
                  setpriority(PRIO_PROCESS, static_cast<id_t>(hogs.back()->pid()), -20) == 0;
    }
    if (!permitted) {
      hogs.clear();
      return;
    }
    release = std::jthread([&hogs] {
      std::this_thread::sleep_for(1500ms);
      for (auto& h : hogs) h->end();
    });
  });
  if (release.joinable()) release.join();
  for (auto& h : hogs) h->end();
  if (!permitted) GTEST_SKIP() << "no right to raise a priority (root or RLIMIT_NICE needed)";
  EXPECT_FALSE(told.empty()) << "the workers were not starved: the test did not test";
  for (const auto& t : told) std::cout << t << "\n";
}

}  // namespace
}  // namespace macrostep::testing
