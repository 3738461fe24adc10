// Round trip master -> worker -> master of one macro-step command / reply (issue 4, bench/ipc),
// side by side with the physical floor, in one run:
//   (a) cache-line ping-pong between two threads pinned to two CPUs: one 64-byte line, plain
//       acquire loads and release stores, no PAUSE: what the coherence fabric costs;
//   (b) SpscRing round trip between two processes (fork; the worker attaches to the segment by
//       name) pinned to the same two CPUs, command and reply of the given sizes, spin-then-futex
//       waiting with the default spin budget; plus the same with one-line messages, which
//       isolates the ring protocol from the payload;
//   (c) the same as (b) with sleeping forced (spin budget 0): every wait is a futex sleep and
//       every notify a FUTEX_WAKE, which shows what the futex path costs;
//   (d) the OpenMPI ping-pong of the same payload: not built yet (printed as a TODO).
// Each sample is one round trip timed by the master with the TSC (x86) or steady_clock; the
// timer's own overhead is printed and included in every figure alike.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/spsc_ring.hpp"
#include "macrostep/ipc/wait.hpp"

using namespace macrostep;

namespace {

// ---- timing -------------------------------------------------------------------------------------

#if defined(__x86_64__) || defined(__i386__)
inline std::uint64_t ticks() noexcept {
  _mm_lfence();  // do not let the read move across the timed work
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
constexpr const char* kTimerName = "rdtsc";
#else
inline std::uint64_t ticks() noexcept {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}
constexpr const char* kTimerName = "steady_clock";
#endif

double ticks_per_ns() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t k0 = ticks();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) {
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::uint64_t k1 = ticks();
  return static_cast<double>(k1 - k0) /
         static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

struct Stats {
  double median_ns = 0;
  double p99_ns = 0;
  double min_ns = 0;
};

Stats summarize(std::vector<std::uint64_t> samples, double tpn) {
  std::sort(samples.begin(), samples.end());
  const auto at = [&](double q) {
    const auto i = std::min(samples.size() - 1, static_cast<std::size_t>(q * samples.size()));
    return static_cast<double>(samples[i]) / tpn;
  };
  return Stats{at(0.5), at(0.99), static_cast<double>(samples.front()) / tpn};
}

double timer_overhead_ns(double tpn) {
  std::vector<std::uint64_t> s(100'000);
  for (auto& v : s) {
    const std::uint64_t a = ticks();
    v = ticks() - a;
  }
  return summarize(std::move(s), tpn).median_ns;
}

// ---- pinning ------------------------------------------------------------------------------------

bool pin_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// ---- (a) the floor ------------------------------------------------------------------------------

std::vector<std::uint64_t> cache_line_pingpong(int cpu_master, int cpu_peer, std::size_t warmup,
                                               std::size_t n) {
  struct alignas(64) Line {
    std::atomic<std::uint64_t> value{0};
  };
  Line line;
  const std::size_t total = warmup + n;
  std::thread peer([&] {
    pin_thread(cpu_peer);
    for (std::uint64_t i = 0; i < total; ++i) {
      while (line.value.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.value.store(2 * i + 2, std::memory_order_release);
    }
  });
  pin_thread(cpu_master);
  std::vector<std::uint64_t> samples;
  samples.reserve(n);
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::uint64_t t0 = ticks();
    line.value.store(2 * i + 1, std::memory_order_release);
    while (line.value.load(std::memory_order_acquire) != 2 * i + 2) {
    }
    const std::uint64_t t1 = ticks();
    if (i >= warmup) samples.push_back(t1 - t0);
  }
  peer.join();
  return samples;
}

// ---- (b), (c) the ring between two processes ----------------------------------------------------

template <std::size_t Bytes>
struct Message {
  static_assert(Bytes >= 64 && Bytes % 8 == 0);
  std::uint64_t seq;
  std::byte payload[Bytes - sizeof(std::uint64_t)];
};

constexpr std::uint64_t kStop = ~std::uint64_t{0};
constexpr std::size_t kRingSlots = 64;

struct RingResult {
  std::vector<std::uint64_t> samples;
  double futex_wakes_per_rt = 0;
  double futex_sleeps_per_rt = 0;
  bool ok = false;
};

template <std::size_t CommandBytes, std::size_t ReplyBytes>
RingResult ring_pingpong(int cpu_master, int cpu_worker, std::size_t warmup, std::size_t n,
                         const ipc::WaitPolicy& policy) {
  using Command = Message<CommandBytes>;
  using Reply = Message<ReplyBytes>;
  using CommandRing = ipc::SpscRing<Command, kRingSlots>;
  using ReplyRing = ipc::SpscRing<Reply, kRingSlots>;

  ipc::SegmentOptions options;
  options.region_bytes = sizeof(CommandRing) + sizeof(ReplyRing) + 4096;
  ipc::SharedSegment segment = ipc::SharedSegment::create(options);
  auto& commands = CommandRing::create(segment, "cmd.0");
  auto& replies = ReplyRing::create(segment, "reply.0");
  const std::string name = segment.name();

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // The worker: a no-op subsystem. Attaches by name, as a real worker process would.
    int rc = 0;
    try {
      pin_thread(cpu_worker);
      ipc::SharedSegment mine = ipc::SharedSegment::attach(name);
      auto& cmd = CommandRing::attach(mine, "cmd.0");
      auto& rep = ReplyRing::attach(mine, "reply.0");
      Command c{};
      Reply r{};
      for (;;) {
        cmd.pop(c, policy);
        if (c.seq == kStop) break;
        r.seq = c.seq;
        rep.push(r, policy);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "worker: %s\n", e.what());
      rc = 1;
    }
    _exit(rc);
  }

  RingResult result;
  pin_thread(cpu_master);
  result.samples.reserve(n);
  Command c{};
  Reply r{};
  const std::size_t total = warmup + n;
  std::uint64_t wakes0 = 0;
  std::uint64_t sleeps0 = 0;
  bool in_order = true;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == warmup) {
      wakes0 = commands.not_empty_word().wake_calls() + replies.not_empty_word().wake_calls();
      sleeps0 = commands.not_empty_word().sleep_calls() + replies.not_empty_word().sleep_calls();
    }
    c.seq = i;
    const std::uint64_t t0 = ticks();
    commands.push(c, policy);
    replies.pop(r, policy);
    const std::uint64_t t1 = ticks();
    in_order = in_order && r.seq == i;
    if (i >= warmup) result.samples.push_back(t1 - t0);
  }
  const std::uint64_t wakes =
      commands.not_empty_word().wake_calls() + replies.not_empty_word().wake_calls() - wakes0;
  const std::uint64_t sleeps =
      commands.not_empty_word().sleep_calls() + replies.not_empty_word().sleep_calls() - sleeps0;
  c.seq = kStop;
  commands.push(c, policy);
  int status = 0;
  waitpid(pid, &status, 0);
  result.ok = in_order && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  result.futex_wakes_per_rt = static_cast<double>(wakes) / static_cast<double>(n);
  result.futex_sleeps_per_rt = static_cast<double>(sleeps) / static_cast<double>(n);
  return result;
}

// Message sizes are compile-time (fixed POD slots); dispatch the run-time options.
constexpr std::size_t kSizes[] = {64, 128, 256, 512, 1024, 2048, 4096};

template <std::size_t C, std::size_t I = 0>
std::optional<RingResult> dispatch_reply(std::size_t reply_bytes, int a, int b, std::size_t w,
                                         std::size_t n, const ipc::WaitPolicy& p) {
  if constexpr (I < std::size(kSizes)) {
    if (reply_bytes == kSizes[I]) return ring_pingpong<C, kSizes[I]>(a, b, w, n, p);
    return dispatch_reply<C, I + 1>(reply_bytes, a, b, w, n, p);
  } else {
    return std::nullopt;
  }
}

template <std::size_t I = 0>
std::optional<RingResult> run_ring(std::size_t command_bytes, std::size_t reply_bytes, int a, int b,
                                   std::size_t w, std::size_t n, const ipc::WaitPolicy& p) {
  if constexpr (I < std::size(kSizes)) {
    if (command_bytes == kSizes[I]) return dispatch_reply<kSizes[I]>(reply_bytes, a, b, w, n, p);
    return run_ring<I + 1>(command_bytes, reply_bytes, a, b, w, n, p);
  } else {
    return std::nullopt;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Round trip of a macro-step command/reply over the shared-memory ring vs the "
      "cache-line ping-pong floor"};
  std::size_t iterations = 200'000;
  std::size_t warmup = 20'000;
  std::size_t sleeping_iterations = 50'000;
  std::size_t command_bytes = 256;
  std::size_t reply_bytes = 128;
  std::vector<int> cpus;
  std::uint32_t spin = ipc::WaitPolicy::kDefaultSpinIterations;
  app.add_option("--iterations", iterations, "timed round trips per spinning case");
  app.add_option("--sleeping-iterations", sleeping_iterations,
                 "timed round trips of the futex case (c)");
  app.add_option("--warmup", warmup, "untimed round trips before each case");
  app.add_option("--command-bytes", command_bytes, "command size: 64, 128, ..., 4096")
      ->check(CLI::IsMember({64, 128, 256, 512, 1024, 2048, 4096}));
  app.add_option("--reply-bytes", reply_bytes, "reply size: 64, 128, ..., 4096")
      ->check(CLI::IsMember({64, 128, 256, 512, 1024, 2048, 4096}));
  app.add_option("--cpus", cpus, "the two CPUs (master, worker); default: the first two allowed")
      ->expected(2)
      ->delimiter(',');
  app.add_option("--spin", spin, "spin budget of case (b)");
  CLI11_PARSE(app, argc, argv);

  if (cpus.empty()) {
    const auto allowed = allowed_cpus();
    if (allowed.size() < 2) {
      fmt::print(stderr, "ipc_pingpong needs two CPUs; this process may use {}\n", allowed.size());
      return 1;
    }
    cpus = {allowed[0], allowed[1]};
  }
  const int cpu_a = cpus[0];
  const int cpu_b = cpus[1];
  if (iterations == 0 || sleeping_iterations == 0) {
    fmt::print(stderr, "--iterations and --sleeping-iterations must be positive\n");
    return 1;
  }

  const double tpn = ticks_per_ns();
  const double overhead = timer_overhead_ns(tpn);
  fmt::print("ipc_pingpong: round trip master -> worker -> master on CPUs {} and {}\n", cpu_a,
             cpu_b);
  fmt::print("timer: {} ({:.3f} ticks/ns), {:.1f} ns per reading pair (included in every row)\n",
             kTimerName, tpn, overhead);
  fmt::print(
      "samples: {} per spinning case, {} for (c), after {} warm-up round trips; ring of "
      "{} slots, spin budget {}\n\n",
      iterations, sleeping_iterations, warmup, kRingSlots, spin);

  struct Row {
    std::string label;
    Stats stats;
    std::string futex;
    bool ok = true;
  };
  std::vector<Row> rows;

  const Stats floor = summarize(cache_line_pingpong(cpu_a, cpu_b, warmup, iterations), tpn);
  rows.push_back({"(a) cache-line ping-pong, 2 threads (floor)", floor, "-", true});

  const auto ring_row = [&](const std::string& label, std::size_t cb, std::size_t rb,
                            const ipc::WaitPolicy& policy, std::size_t n) {
    const auto r = run_ring(cb, rb, cpu_a, cpu_b, warmup, n, policy);
    if (!r) return;
    rows.push_back({label, summarize(r->samples, tpn),
                    fmt::format("{:.2f} / {:.2f}", r->futex_wakes_per_rt, r->futex_sleeps_per_rt),
                    r->ok});
  };
  ring_row(fmt::format("(b) ring, 2 processes, {} B / {} B, spin", command_bytes, reply_bytes),
           command_bytes, reply_bytes, ipc::WaitPolicy::spinning(spin), iterations);
  ring_row("(b') ring, 2 processes, 64 B / 64 B, spin", 64, 64, ipc::WaitPolicy::spinning(spin),
           iterations);
  ring_row(fmt::format("(c) ring, 2 processes, {} B / {} B, futex", command_bytes, reply_bytes),
           command_bytes, reply_bytes, ipc::WaitPolicy::sleeping(), sleeping_iterations);

  fmt::print("{:<50} {:>10} {:>10} {:>10} {:>12} {:>16}\n", "case", "median ns", "p99 ns", "min ns",
             "median/floor", "futex wake/sleep");
  fmt::print("{:<50} {:>10} {:>10} {:>10} {:>12} {:>16}\n", "", "", "", "", "", "per round trip");
  bool all_ok = true;
  for (const Row& row : rows) {
    fmt::print("{:<50} {:>10.1f} {:>10.1f} {:>10.1f} {:>11.2f}x {:>16}{}\n", row.label,
               row.stats.median_ns, row.stats.p99_ns, row.stats.min_ns,
               row.stats.median_ns / floor.median_ns, row.futex,
               row.ok ? "" : "  FAILED (reply out of order or worker error)");
    all_ok = all_ok && row.ok;
  }
  fmt::print("{:<50} {:>10} {:>10}\n",
             fmt::format("(d) OpenMPI ping-pong, 2 ranks, {} B / {} B", command_bytes, reply_bytes),
             "TODO", "TODO");
  fmt::print(
      "\nTODO(issue 4): the OpenMPI comparison (an MPI ping-pong of the same payload between "
      "two ranks pinned to the same two CPUs) is not built yet; no figure is shown for it.\n");
  fmt::print("goal (issue 4): (b) median <= 1.5x the floor and <= 0.67x the OpenMPI figure\n");
  return all_ok ? 0 : 1;
}
