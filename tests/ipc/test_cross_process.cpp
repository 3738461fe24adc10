// Rings and wait words across processes: a forked child attaches to the segment by name and
// echoes messages; header validation in the child; 8 worker processes on 2 CPUs; a dead peer
// detected through a timed wait; the batched wake-up (one bell for all workers, one reply counter
// for the master) across processes, also after a worker was killed asleep on the bell.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
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
using macrostep::ipc::SegmentErrc;
using macrostep::ipc::SegmentError;
using macrostep::ipc::SegmentHeader;
using macrostep::ipc::SegmentOptions;
using macrostep::ipc::SharedSegment;
using macrostep::ipc::SpscRing;
using macrostep::ipc::WaitClock;
using macrostep::ipc::WaitPolicy;
using macrostep::ipc::WaitStatus;
using macrostep::ipc::WaitWord;
using macrostep::ipc::testing::CpuRestriction;
using macrostep::ipc::testing::fork_child;
using macrostep::ipc::testing::kAddressSanitizer;
using macrostep::ipc::testing::kChildSegmentError;
using macrostep::ipc::testing::kThreadSanitizer;
using macrostep::ipc::testing::wait_child;

// The sizes of a macro-step command and reply (256 B / 128 B).
struct Command {
  std::uint64_t seq;
  std::array<std::uint64_t, 31> payload;
};
struct Reply {
  std::uint64_t seq;
  std::uint64_t sum;
  std::array<std::uint64_t, 14> payload;
};
static_assert(sizeof(Command) == 256 && sizeof(Reply) == 128);

using CommandRing = SpscRing<Command, 64>;
using ReplyRing = SpscRing<Reply, 64>;

Command make_command(std::uint64_t seq) {
  Command c{};
  c.seq = seq;
  for (std::size_t k = 0; k < c.payload.size(); ++k) c.payload[k] = seq * 31 + k;
  return c;
}

std::uint64_t payload_sum(const Command& c) {
  std::uint64_t s = 0;
  for (std::uint64_t v : c.payload) s += v;
  return s;
}

// The worker side of the echo: attach by name only (nothing inherited is used), echo `n`
// commands. Exit status 0 if every command arrived intact and in order.
int echo_worker(const std::string& segment_name, const std::string& cmd, const std::string& reply,
                std::uint64_t n, const WaitPolicy& policy) {
  SharedSegment segment = SharedSegment::attach(segment_name);
  auto& commands = CommandRing::attach(segment, cmd);
  auto& replies = ReplyRing::attach(segment, reply);
  Command c{};
  for (std::uint64_t i = 0; i < n; ++i) {
    commands.pop(c, policy);
    if (c.seq != i || payload_sum(c) != payload_sum(make_command(i))) return 1;
    Reply r{};
    r.seq = c.seq;
    r.sum = payload_sum(c);
    replies.push(r, policy);
  }
  return 0;
}

// Master side of the echo over one ring pair; returns the number of bad replies.
std::uint64_t echo_master(CommandRing& commands, ReplyRing& replies, std::uint64_t n,
                          const WaitPolicy& policy) {
  std::uint64_t bad = 0;
  Reply r{};
  for (std::uint64_t i = 0; i < n; ++i) {
    commands.push(make_command(i), policy);
    replies.pop(r, policy);
    bad += (r.seq != i || r.sum != payload_sum(make_command(i))) ? 1 : 0;
  }
  return bad;
}

class CrossProcessEcho : public ::testing::TestWithParam<bool> {};

TEST_P(CrossProcessEcho, ChildAttachesByNameAndEchoesEveryMessage) {
  const bool sleeping = GetParam();
  const WaitPolicy policy = sleeping ? WaitPolicy::sleeping() : WaitPolicy::adaptive(2);
  // Under a sanitizer each message is checked, not the throughput: fewer round trips (the
  // spinning echo's 200 000 took 8 CPU s of CI's ASan phase).
  const bool sanitized = kThreadSanitizer || kAddressSanitizer;
  const std::uint64_t n = sanitized ? (sleeping ? 5'000 : 20'000) : (sleeping ? 20'000 : 200'000);
  SharedSegment segment = SharedSegment::create();
  auto& commands = CommandRing::create(segment, "cmd.0");
  auto& replies = ReplyRing::create(segment, "reply.0");
  const std::string name = segment.name();

  const pid_t pid = fork_child([&] { return echo_worker(name, "cmd.0", "reply.0", n, policy); });
  ASSERT_GT(pid, 0);
  EXPECT_EQ(echo_master(commands, replies, n, policy), 0u);
  EXPECT_EQ(wait_child(pid), 0);
  EXPECT_EQ(segment.attached_processes(), 1u);  // the child detached when it finished
  if (sleeping) {
    EXPECT_GT(commands.not_empty_word().wake_calls(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, CrossProcessEcho, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Sleeping" : "Spinning"; });

TEST(CrossProcess, ChildRefusesACorruptHeaderWithAClearError) {
  SharedSegment segment = SharedSegment::create();
  auto& h = *reinterpret_cast<SegmentHeader*>(segment.base());
  const std::string name = segment.name();
  const auto child_attach = [&] {
    return wait_child(fork_child([&] {
      SharedSegment s = SharedSegment::attach(name);
      return 0;
    }));
  };
  EXPECT_EQ(child_attach(), 0);
  h.id.magic ^= 0xff;
  EXPECT_EQ(child_attach(), kChildSegmentError + static_cast<int>(SegmentErrc::kBadMagic));
  h.id.magic ^= 0xff;
  h.id.layout_version += 1;
  EXPECT_EQ(child_attach(), kChildSegmentError + static_cast<int>(SegmentErrc::kBadVersion));
  h.id.layout_version -= 1;
  h.id.owner_uid += 1;
  EXPECT_EQ(child_attach(), kChildSegmentError + static_cast<int>(SegmentErrc::kWrongOwner));
  h.id.owner_uid -= 1;
  EXPECT_EQ(child_attach(), 0);
}

TEST(CrossProcess, WaitWordInTheSegmentWakesAnotherProcess) {
  struct Shared {
    std::atomic<std::uint32_t> flag{0};
    WaitWord word;
  };
  SharedSegment segment = SharedSegment::create();
  Shared& shared = segment.construct<Shared>("event");
  const std::string name = segment.name();
  const pid_t pid = fork_child([&] {
    SharedSegment s = SharedSegment::attach(name);
    Shared& mine = s.get<Shared>("event");
    const WaitStatus st = mine.word.wait(
        [&] { return mine.flag.load(std::memory_order_acquire) != 0; }, WaitPolicy::sleeping());
    return st == WaitStatus::kReady ? 0 : 1;
  });
  while (shared.word.sleepers() == 0) sched_yield();  // the child sleeps in the futex
  shared.flag.store(1, std::memory_order_release);
  shared.word.notify();
  EXPECT_EQ(wait_child(pid), 0);
  EXPECT_EQ(shared.word.wake_calls(), 1u);
}

TEST(CrossProcess, EightWorkerProcessesOnTwoCpus) {
  // The master and 8 workers (9 processes) on 2 CPUs, macro-step pattern: send a command to
  // every worker, then collect every reply. Completion is the check.
  CpuRestriction two_cpus(2);  // inherited by the children
  constexpr int kWorkers = 8;
  const std::uint64_t rounds = kThreadSanitizer ? 1'000 : 5'000;
  SegmentOptions options;
  options.region_bytes = std::size_t{4} << 20;
  SharedSegment segment = SharedSegment::create(options);  // records run_cpus = 2
  EXPECT_EQ(segment.identity().run_cpus, static_cast<std::uint32_t>(two_cpus.cpus()));
  std::vector<CommandRing*> commands;
  std::vector<ReplyRing*> replies;
  for (int w = 0; w < kWorkers; ++w) {
    commands.push_back(&CommandRing::create(segment, std::string("cmd.") + std::to_string(w)));
    replies.push_back(&ReplyRing::create(segment, std::string("reply.") + std::to_string(w)));
  }
  const WaitPolicy policy = WaitPolicy::adaptive(kWorkers + 1, segment.identity().run_cpus);
  EXPECT_EQ(policy.spin_iterations, 0u);
  const std::string name = segment.name();
  std::vector<pid_t> pids;
  for (int w = 0; w < kWorkers; ++w) {
    pids.push_back(fork_child([&, w] {
      return echo_worker(name, std::string("cmd.") + std::to_string(w),
                         std::string("reply.") + std::to_string(w), rounds, policy);
    }));
  }
  std::uint64_t bad = 0;
  Reply r{};
  for (std::uint64_t i = 0; i < rounds; ++i) {
    for (int w = 0; w < kWorkers; ++w)
      commands[static_cast<std::size_t>(w)]->push(make_command(i), policy);
    for (int w = 0; w < kWorkers; ++w) {
      replies[static_cast<std::size_t>(w)]->pop(r, policy);
      bad += (r.seq != i || r.sum != payload_sum(make_command(i))) ? 1 : 0;
    }
  }
  EXPECT_EQ(bad, 0u);
  for (const pid_t pid : pids) EXPECT_EQ(wait_child(pid), 0);
}

TEST(CrossProcess, TimedWaitLetsTheMasterNoticeADeadWorker) {
  SharedSegment segment = SharedSegment::create();
  auto& commands = CommandRing::create(segment, "cmd.0");
  auto& replies = ReplyRing::create(segment, "reply.0");
  const std::string name = segment.name();
  const pid_t pid = fork_child([&] {
    SharedSegment s = SharedSegment::attach(name);
    auto& cmd = CommandRing::attach(s, "cmd.0");
    auto& rep = ReplyRing::attach(s, "reply.0");
    const Command c = cmd.pop(WaitPolicy::sleeping());
    rep.push(Reply{c.seq, payload_sum(c), {}}, WaitPolicy::sleeping());
    raise(SIGKILL);  // dies before it reads the second command
    return 0;
  });
  const WaitPolicy policy = WaitPolicy::adaptive(2);
  EXPECT_EQ(echo_master(commands, replies, 1, policy), 0u);
  commands.push(make_command(1), policy);
  Reply r{};
  int status = 0;
  int timeouts = 0;
  for (;;) {  // the master's loop: wait for the reply a bounded time, then check the worker
    if (replies.pop_for(r, policy, 50ms) == WaitStatus::kReady) break;
    ++timeouts;
    if (waitpid(pid, &status, WNOHANG) == pid) break;
  }
  EXPECT_GE(timeouts, 1);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

// ---- the batched wake-up across processes (ipc/.../protocol.hpp, "Waking") -------------

// A worker process of the batched echo: sleeps on the shared bell for its next command, answers
// it through its own reply ring and arrives at the shared counter. Exit status 0 if every
// command of rounds [first, first + n) arrived intact and in order.
int bell_worker(const std::string& segment_name, int w, std::uint64_t n) {
  SharedSegment segment = SharedSegment::attach(segment_name);
  auto& bell = segment.get<WaitWord>("bell");
  auto& counter = segment.get<ArrivalCounter>("replies");
  auto& commands = CommandRing::attach(segment, "cmd." + std::to_string(w));
  auto& replies = ReplyRing::attach(segment, "reply." + std::to_string(w));
  Command c{};
  for (std::uint64_t i = 0; i < n; ++i) {
    while (commands.pop_until(c, bell, WaitPolicy::sleeping(), WaitClock::now() + 1s) !=
           WaitStatus::kReady) {
    }
    if (c.seq != i || payload_sum(c) != payload_sum(make_command(i))) return 1;
    replies.push_quiet(Reply{c.seq, payload_sum(c), {}}, WaitPolicy::sleeping());
    counter.arrive();
  }
  return 0;
}

// The master side: `rounds` batches to the workers in `which`, one bell and one counter wait per
// batch; returns the number of bad replies.
std::uint64_t bell_master(WaitWord& bell, ArrivalCounter& counter,
                          std::vector<CommandRing*>& commands, std::vector<ReplyRing*>& replies,
                          const std::vector<int>& which, std::uint64_t rounds) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < rounds; ++i) {
    counter.expect_more(static_cast<std::uint32_t>(which.size()));
    for (int w : which) {
      if (!commands[static_cast<std::size_t>(w)]->try_push_quiet(make_command(i))) ++bad;
    }
    bell.notify();
    if (counter.wait(WaitPolicy::sleeping(), WaitClock::now() + 10s) != WaitStatus::kReady) {
      return bad + rounds;  // a lost wake-up: fail instead of hanging
    }
    Reply r{};
    for (int w : which) {
      const bool got = replies[static_cast<std::size_t>(w)]->try_pop(r);
      bad += (!got || r.seq != i || r.sum != payload_sum(make_command(i))) ? 1 : 0;
    }
  }
  return bad;
}

struct BellSegment {
  SharedSegment segment;
  WaitWord* bell;
  ArrivalCounter* counter;
  std::vector<CommandRing*> commands;
  std::vector<ReplyRing*> replies;
  explicit BellSegment(int workers) : segment(create(workers)) {
    bell = &segment.construct<WaitWord>("bell");
    counter = &segment.construct<ArrivalCounter>("replies");
    for (int w = 0; w < workers; ++w) {
      commands.push_back(&CommandRing::create(segment, "cmd." + std::to_string(w)));
      replies.push_back(&ReplyRing::create(segment, "reply." + std::to_string(w)));
    }
  }
  static SharedSegment create(int workers) {
    SegmentOptions options;
    options.region_bytes = static_cast<std::size_t>(workers) * (std::size_t{48} << 10) + 4096;
    return SharedSegment::create(options);
  }
};

// 8 worker processes and the master on 2 CPUs, everyone sleeping while waiting: one FUTEX_WAKE
// per batch for all the workers, and at most one for the master.
TEST(CrossProcessBell, OneWakeUpPerBatchForEightSleepingWorkers) {
  CpuRestriction two_cpus(2);
  constexpr int kWorkers = 8;
  const std::uint64_t rounds = kThreadSanitizer ? 500 : 5'000;
  BellSegment b(kWorkers);
  const std::string name = b.segment.name();
  std::vector<pid_t> pids;
  std::vector<int> all;
  for (int w = 0; w < kWorkers; ++w) {
    pids.push_back(fork_child([&, w] { return bell_worker(name, w, rounds); }));
    all.push_back(w);
  }
  EXPECT_EQ(bell_master(*b.bell, *b.counter, b.commands, b.replies, all, rounds), 0u);
  for (const pid_t pid : pids) EXPECT_EQ(wait_child(pid), 0);
  EXPECT_LE(b.bell->wake_calls(), rounds);
  EXPECT_LE(b.counter->word().wake_calls(), rounds);
  std::cout << "bell FUTEX_WAKEs " << b.bell->wake_calls() << ", worker sleeps "
            << b.bell->sleep_calls() << ", master FUTEX_WAKEs " << b.counter->word().wake_calls()
            << " in " << rounds << " batches\n";
}

// A worker killed while asleep on the bell never takes its sleeper count back: the others must
// still be woken for every batch (it costs a spare FUTEX_WAKE, never a lost wake-up).
TEST(CrossProcessBell, AWorkerKilledAsleepOnTheBellDoesNotStopTheOthers) {
  constexpr int kWorkers = 3;
  const std::uint64_t rounds = kThreadSanitizer ? 200 : 2'000;
  BellSegment b(kWorkers);
  const std::string name = b.segment.name();
  std::vector<pid_t> pids;
  for (int w = 0; w < kWorkers; ++w) {
    pids.push_back(fork_child([&, w] { return bell_worker(name, w, rounds); }));
  }
  while (b.bell->sleepers() < kWorkers) std::this_thread::sleep_for(1ms);
  kill(pids[0], SIGKILL);
  EXPECT_EQ(wait_child(pids[0]), -SIGKILL);
  EXPECT_EQ(bell_master(*b.bell, *b.counter, b.commands, b.replies, {1, 2}, rounds), 0u);
  EXPECT_EQ(wait_child(pids[1]), 0);
  EXPECT_EQ(wait_child(pids[2]), 0);
  EXPECT_GE(b.bell->sleepers(), 1u);  // the dead worker's count stays
}

}  // namespace
