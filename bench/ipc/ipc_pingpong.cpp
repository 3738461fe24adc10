// Round trip master -> worker -> master of one macro-step command / reply (bench/ipc),
// side by side with the physical floor, in one run:
//   (a) cache-line ping-pong between two threads pinned to two CPUs: one 64-byte line, plain
//       acquire loads and release stores, no PAUSE: what the coherence fabric costs;
//   (b) SpscRing round trip between two processes (fork; the worker attaches to the segment by
//       name) pinned to the same two CPUs, with the product's messages: ipc::StepCommand and
//       ipc::StepReply of a no-op subsystem with 2 inputs, κ = 2 and one comparison run (as
//       explicit Jacobi with exMD sends them; only their wire bytes travel), spin-then-futex
//       waiting with the default spin budget; (b') and (b'') the same with plain messages of
//       --command-bytes / --reply-bytes and of one line, which separate the ring protocol from
//       the payload;
//   (c) the same as (b) with sleeping forced (spin budget 0): every wait is a futex sleep and
//       every notify a FUTEX_WAKE, which shows what the futex path costs;
//   (d) the OpenMPI ping-pong of the payload of (b): mpi_pingpong (built next to this program) run
//       by `mpirun -np 2 --bind-to core --map-by core` with the shared-memory BTL (vader, via
//       the ob1 PML) by default; MPI_Send / MPI_Recv of the command, then of the reply. The
//       binding MPI reports and the CPUs each rank saw are printed. Without mpirun, or if it
//       fails, the row says why and shows no figure.
// The cases are measured in interleaved rounds (a, b, b', b'', d, then again), and the ratios of
// the goal are taken within each round: on a shared machine (a KVM guest here) the speed of the
// cores changes by a factor of 2-4 within seconds, and a floor measured a minute before the ring
// would compare different machines. Every round's figures are printed.
// Each sample is one round trip timed by the master (rank 0 for MPI) with the TSC (x86) or
// steady_clock (bench_timing.hpp, shared by both programs); the timer's own overhead is printed
// and included in every figure alike.
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/spsc_ring.hpp"
#include "macrostep/ipc/wait.hpp"
#include "macrostep/worker/wire.hpp"

using namespace macrostep;
using namespace macrostep::bench;

namespace {

// ---- pinning ------------------------------------------------------------------------------------

bool pin_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
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

template <std::size_t Bytes>
std::uint64_t seq_of(const Message<Bytes>& m) {
  return m.seq;
}
template <std::size_t Bytes>
void set_seq(Message<Bytes>& m, std::uint64_t seq) {
  m.seq = seq;
}
// The product's messages carry the attempt id, which the worker echoes.
std::uint64_t seq_of(const ipc::StepCommand& m) {
  return m.id;
}
std::uint64_t seq_of(const ipc::StepReply& m) {
  return m.id;
}
void set_seq(ipc::StepCommand& m, std::uint64_t seq) {
  m.id = seq;
}
void set_seq(ipc::StepReply& m, std::uint64_t seq) {
  m.id = seq;
}

// The round trip of Command / Reply messages. `command` is the message the master sends (its
// sequence number set before every push); the worker answers every command with `reply`, its
// sequence number copied from the command.
template <class Command, class Reply>
RingResult ring_pingpong(int cpu_master, int cpu_worker, std::size_t warmup, std::size_t n,
                         const ipc::WaitPolicy& policy, const Command& command,
                         const Reply& reply) {
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
      auto c = std::make_unique<Command>(command);
      auto r = std::make_unique<Reply>(reply);
      for (;;) {
        cmd.pop(*c, policy);
        if (seq_of(*c) == kStop) break;
        set_seq(*r, seq_of(*c));
        rep.push(*r, policy);
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
  auto c = std::make_unique<Command>(command);
  auto r = std::make_unique<Reply>(reply);
  const std::size_t total = warmup + n;
  std::uint64_t wakes0 = 0;
  std::uint64_t sleeps0 = 0;
  bool in_order = true;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == warmup) {
      wakes0 = commands.not_empty_word().wake_calls() + replies.not_empty_word().wake_calls();
      sleeps0 = commands.not_empty_word().sleep_calls() + replies.not_empty_word().sleep_calls();
    }
    set_seq(*c, i);
    const std::uint64_t t0 = ticks();
    commands.push(*c, policy);
    replies.pop(*r, policy);
    const std::uint64_t t1 = ticks();
    in_order = in_order && seq_of(*r) == i;
    if (i >= warmup) result.samples.push_back(t1 - t0);
  }
  const std::uint64_t wakes =
      commands.not_empty_word().wake_calls() + replies.not_empty_word().wake_calls() - wakes0;
  const std::uint64_t sleeps =
      commands.not_empty_word().sleep_calls() + replies.not_empty_word().sleep_calls() - sleeps0;
  set_seq(*c, kStop);
  commands.push(*c, policy);
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
    if (reply_bytes == kSizes[I]) {
      return ring_pingpong(a, b, w, n, p, Message<C>{}, Message<kSizes[I]>{});
    }
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

// The product's hot-path messages for a no-op subsystem as the explicit scheme with exMD sends
// them: 2 inputs (a cut chain segment), κ = 2, the nominal run plus one comparison run; the
// reply with 2 outputs per run. Only their wire_bytes() travel through the ring.
struct ProductMessages {
  std::unique_ptr<ipc::StepCommand> command = std::make_unique<ipc::StepCommand>();
  std::unique_ptr<ipc::StepReply> reply = std::make_unique<ipc::StepReply>();
};

ProductMessages product_messages() {
  ProductMessages m;
  model::SupportPoints p{};
  p.degree = 2;
  p.channels = 2;
  p.step_begin = 1e-3;
  for (std::size_t j = 0; j < 3; ++j) {
    p.time[j] = 1e-3 - static_cast<double>(j) * 1e-4;
    p.value[0][j] = 0.5 + static_cast<double>(j);
    p.value[1][j] = -0.25 * static_cast<double>(j);
  }
  m.command->kind = ipc::CommandKind::kStep;
  m.command->t_end = 1.1e-3;
  model::SupportPoints comparison = p;
  comparison.degree = 1;  // a comparison run (exLE's would be one degree more)
  const runner::ExtraRun extra[] = {runner::ExtraRun::comparison(comparison)};
  worker::pack_runs(*m.command, p, extra);
  m.reply->runs = 2;
  m.reply->outputs = 2;
  return m;
}

// ---- (d) OpenMPI ping-pong, run through mpirun ------------------------------------------------

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable(candidate)) return candidate;
  }
  return {};
}

// Canonical directory, same name: OpenMPI derives its prefix from an absolute argv[0], and
// /bin/mpirun (merged /usr) would give the prefix "/", which it refuses.
std::string canonical_dir(const std::string& path) {
  char* dir = realpath(directory_of(path).c_str(), nullptr);
  if (dir == nullptr) return path;
  std::string out = std::string(dir) + path.substr(path.rfind('/'));
  std::free(dir);
  return out;
}

// mpirun: --mpirun, else PATH, else where CMake's FindMPI saw it.
std::string locate_mpirun(const std::string& given) {
  if (!given.empty()) return is_executable(given) ? given : std::string{};
  if (auto p = find_on_path("mpirun"); !p.empty()) return p[0] == '/' ? canonical_dir(p) : p;
#ifdef MACROSTEP_MPIEXEC
  if (is_executable(MACROSTEP_MPIEXEC)) return canonical_dir(MACROSTEP_MPIEXEC);
#endif
  return {};
}

// mpi_pingpong: --mpi-binary, else next to this executable (/proc/self/exe, then argv[0]), else
// where the build put it.
std::string locate_mpi_pingpong(const std::string& given, const char* argv0) {
  if (!given.empty()) return is_executable(given) ? given : std::string{};
  std::vector<std::string> candidates;
  std::vector<char> self(4096);
  const ssize_t len = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (len > 0) {
    candidates.push_back(directory_of(std::string(self.data(), static_cast<std::size_t>(len))) +
                         "/mpi_pingpong");
  }
  if (argv0 != nullptr) candidates.push_back(directory_of(argv0) + "/mpi_pingpong");
#ifdef MACROSTEP_MPI_PINGPONG_BUILT
  candidates.emplace_back(MACROSTEP_MPI_PINGPONG_BUILT);
#endif
  for (const auto& c : candidates) {
    if (is_executable(c)) return c;
  }
  return {};
}

struct ChildOutput {
  std::string out;
  std::string err;
  int status = 0;
  bool started = false;
  bool timed_out = false;
  std::string failure;  // why it could not be started
};

// Runs argv with stdout and stderr captured separately, with the given CPU affinity (the caller
// is pinned to one CPU by now, and mpirun must see both), killing its process group after
// `timeout`.
ChildOutput run_captured(const std::vector<std::string>& args, const cpu_set_t& affinity,
                         std::chrono::seconds timeout) {
  ChildOutput result;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0) {
    result.failure = fmt::format("pipe: {}", std::strerror(errno));
    return result;
  }
  if (pipe(err_pipe) != 0) {
    result.failure = fmt::format("pipe: {}", std::strerror(errno));
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    result.failure = fmt::format("fork: {}", std::strerror(errno));
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);
    sched_setaffinity(0, sizeof(affinity), &affinity);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  result.started = true;
  close(out_pipe[1]);
  close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      // SIGTERM first: mpirun forwards it to the ranks (which are not all in its group).
      result.timed_out = true;
      kill(-pid, SIGTERM);
      for (int k = 0; k < 40 && waitpid(pid, &result.status, WNOHANG) == 0; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      kill(-pid, SIGKILL);
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (int k = 0; k < 2 && ready > 0; ++k) {
      if (fds[k].fd < 0 || (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t got = read(fds[k].fd, buffer, sizeof(buffer));
      if (got > 0) {
        sinks[k]->append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  for (const auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  waitpid(pid, &result.status, 0);
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

struct MpiResult {
  std::optional<Stats> stats;         // set only when mpi_pingpong reported a figure
  std::string problem;                // why there is no figure (or why it is suspect)
  std::string command;                // the mpirun command line
  std::string library;                // MPI_Get_library_version
  std::vector<std::string> bindings;  // what --report-bindings printed
  std::string rank_cpus;              // what each rank saw (allowed / running on)
  bool same_cpus = false;             // ranks ran on the ring's two CPUs
};

MpiResult run_mpi(const std::string& mpirun, const std::string& binary,
                  const std::string& extra_args, std::size_t command_bytes, std::size_t reply_bytes,
                  std::size_t rounds, std::size_t warmup, int cpu_a, int cpu_b,
                  const cpu_set_t& affinity, std::chrono::seconds timeout) {
  MpiResult r;
  if (mpirun.empty()) {
    r.problem = "not measured: mpirun not found (PATH, --mpirun)";
    return r;
  }
  if (binary.empty()) {
    r.problem = "not measured: mpi_pingpong not found next to ipc_pingpong (--mpi-binary)";
    return r;
  }
  std::vector<std::string> args = {
      mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", "--bind-to", "core", "--map-by",
      "core", "--report-bindings"};
  for (auto& w : split_words(extra_args)) args.push_back(std::move(w));
  for (auto& w : {binary, std::to_string(command_bytes), std::to_string(reply_bytes),
                  std::to_string(rounds), std::to_string(warmup)}) {
    args.push_back(w);
  }
  for (const auto& a : args) {
    if (!r.command.empty()) r.command += ' ';
    r.command += a;
  }

  const ChildOutput child = run_captured(args, affinity, timeout);
  std::vector<std::string> diagnostics;
  for (const auto& line : lines_of(child.err)) {
    if (line.find("MCW rank") != std::string::npos) {
      r.bindings.push_back(line);
    } else if (line.find_first_not_of(" -") != std::string::npos) {
      diagnostics.push_back(line);
    } else if (!diagnostics.empty()) {
      diagnostics.emplace_back();  // a blank or dashed line ends a paragraph
    }
  }
  std::map<std::string, std::string> kv;
  for (const auto& line : lines_of(child.out)) {
    if (line.rfind("mpi_pingpong_library ", 0) == 0) {
      r.library = line.substr(std::strlen("mpi_pingpong_library "));
    } else if (line.rfind("mpi_pingpong ", 0) == 0) {
      for (const auto& w : split_words(line.substr(std::strlen("mpi_pingpong ")))) {
        const auto eq = w.find('=');
        if (eq != std::string::npos) kv[w.substr(0, eq)] = w.substr(eq + 1);
      }
    }
  }
  // The first paragraph of what mpirun said (its messages are framed by lines of dashes).
  const auto first_diagnostic = [&] {
    std::string text;
    for (const auto& line : diagnostics) {
      const auto b = line.find_first_not_of(' ');
      if (!text.empty() && (b == std::string::npos || line.empty())) break;
      if (b == std::string::npos) continue;
      if (!text.empty()) text += ' ';
      text += line.substr(b);
      if (text.size() > 240) break;
    }
    if (text.size() > 240) text = text.substr(0, 237) + "...";
    return text.empty() ? std::string("no message") : text;
  };
  if (!child.started) {
    r.problem = "not measured: " + child.failure;
    return r;
  }
  if (child.timed_out) {
    r.problem = fmt::format("not measured: mpirun killed after {} s ({})", timeout.count(),
                            first_diagnostic());
    return r;
  }
  const bool exited_ok = WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0;
  const auto number = [&](const char* key) -> std::optional<double> {
    const auto it = kv.find(key);
    if (it == kv.end()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') return std::nullopt;
    return v;
  };
  const auto median = number("median_ns");
  const auto p99 = number("p99_ns");
  const auto min = number("min_ns");
  if (!exited_ok || !median || !p99 || !min || kv["ok"] != "1") {
    const std::string how =
        WIFEXITED(child.status)     ? fmt::format("exit status {}", WEXITSTATUS(child.status))
        : WIFSIGNALED(child.status) ? fmt::format("signal {}", WTERMSIG(child.status))
                                    : std::string("unknown status");
    r.problem = fmt::format("not measured: mpirun failed ({}): {}", how,
                            kv["ok"] == "0" ? "replies out of order" : first_diagnostic());
    return r;
  }
  r.stats = Stats{*median, *p99, *min};
  r.rank_cpus =
      fmt::format("rank 0 allowed CPUs {} (ran on {}), rank 1 allowed CPUs {} (ran on {})",
                  kv["rank0_cpus"], kv["rank0_on"], kv["rank1_cpus"], kv["rank1_on"]);
  const std::string a = std::to_string(cpu_a);
  const std::string b = std::to_string(cpu_b);
  r.same_cpus = (kv["rank0_cpus"] == a && kv["rank1_cpus"] == b) ||
                (kv["rank0_cpus"] == b && kv["rank1_cpus"] == a);
  if (kv["timer"] != kTimerName) {
    r.problem =
        fmt::format("mpi_pingpong timed with {}, ipc_pingpong with {}", kv["timer"], kTimerName);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Round trip of a macro-step command/reply over the shared-memory ring vs the "
      "cache-line ping-pong floor"};
  std::size_t iterations = 200'000;
  std::size_t warmup = 20'000;
  std::size_t rounds = 5;
  std::size_t sleeping_iterations = 50'000;
  std::size_t command_bytes = 256;
  std::size_t reply_bytes = 128;
  std::vector<int> cpus;
  std::uint32_t spin = ipc::WaitPolicy::kDefaultSpinIterations;
  app.add_option("--iterations", iterations, "timed round trips per spinning case");
  app.add_option("--sleeping-iterations", sleeping_iterations,
                 "timed round trips of the futex case (c)");
  app.add_option("--warmup", warmup, "untimed round trips before each case");
  app.add_option("--rounds", rounds,
                 "interleaved rounds of (a), (b), (b'), (b''), (d); --iterations are split "
                 "over them")
      ->check(CLI::PositiveNumber);
  app.add_option("--command-bytes", command_bytes, "command size: 64, 128, ..., 4096")
      ->check(CLI::IsMember({64, 128, 256, 512, 1024, 2048, 4096}));
  app.add_option("--reply-bytes", reply_bytes, "reply size: 64, 128, ..., 4096")
      ->check(CLI::IsMember({64, 128, 256, 512, 1024, 2048, 4096}));
  app.add_option("--cpus", cpus, "the two CPUs (master, worker); default: the first two allowed")
      ->expected(2)
      ->delimiter(',');
  app.add_option("--spin", spin, "spin budget of case (b)");
  std::string mpirun;
  std::string mpi_binary;
  std::string mpi_args = "--mca pml ob1 --mca btl self,vader";
  int mpi_timeout_s = 120;
  app.add_option("--mpirun", mpirun, "mpirun to use for (d); default: PATH");
  app.add_option("--mpi-binary", mpi_binary,
                 "mpi_pingpong to run for (d); default: next to this program");
  app.add_option("--mpi-args", mpi_args,
                 "extra mpirun arguments for (d) (whitespace-separated), e.g. the MCA transport")
      ->capture_default_str();
  app.add_option("--mpi-timeout", mpi_timeout_s, "seconds before (d) is abandoned")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  // The affinity we were started with: the cases below pin this thread to one CPU, and mpirun
  // must be started with both.
  cpu_set_t initial_affinity;
  CPU_ZERO(&initial_affinity);
  sched_getaffinity(0, sizeof(initial_affinity), &initial_affinity);

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

  // Every case is measured in `rounds` rounds, interleaved (a, b, b', b'', d, a, b, ...), so that
  // a change of the machine's speed (other jobs, the hypervisor) hits all cases alike; the
  // ratios of the goal are taken within each round and their median is reported.
  struct Case {
    std::string label;
    std::vector<Stats> rounds;
    std::string futex = "-";
    bool ok = true;
    std::string problem;  // why there is no figure (MPI)
  };
  const ProductMessages product = product_messages();
  const std::size_t product_command_bytes = product.command->wire_bytes();
  const std::size_t product_reply_bytes = product.reply->wire_bytes();
  Case floor_case{"(a) cache-line ping-pong, 2 threads (floor)", {}, "-", true, {}};
  Case ring_case{fmt::format("(b) ring, StepCommand/StepReply {} B / {} B, spin",
                             product_command_bytes, product_reply_bytes),
                 {},
                 "-",
                 true,
                 {}};
  Case plain_case{fmt::format("(b') ring, {} B / {} B messages, spin", command_bytes, reply_bytes),
                  {},
                  "-",
                  true,
                  {}};
  Case line_case{"(b'') ring, 64 B / 64 B messages, spin", {}, "-", true, {}};
  Case mpi_case{fmt::format("(d) OpenMPI ping-pong, 2 ranks, {} B / {} B", product_command_bytes,
                            product_reply_bytes),
                {},
                "-",
                true,
                {}};
  MpiResult mpi;
  const std::size_t per_round = std::max<std::size_t>(1, iterations / rounds);
  const auto add_ring = [&](Case& c, const std::optional<RingResult>& r) {
    if (!r) return;
    c.rounds.push_back(summarize(r->samples, tpn));
    c.futex = fmt::format("{:.2f} / {:.2f}", r->futex_wakes_per_rt, r->futex_sleeps_per_rt);
    c.ok = c.ok && r->ok;
  };
  const std::string mpirun_path = locate_mpirun(mpirun);
  const std::string mpi_binary_path = locate_mpi_pingpong(mpi_binary, argv[0]);
  for (std::size_t round = 0; round < rounds; ++round) {
    floor_case.rounds.push_back(
        summarize(cache_line_pingpong(cpu_a, cpu_b, warmup, per_round), tpn));
    add_ring(ring_case,
             ring_pingpong(cpu_a, cpu_b, warmup, per_round, ipc::WaitPolicy::spinning(spin),
                           *product.command, *product.reply));
    add_ring(plain_case, run_ring(command_bytes, reply_bytes, cpu_a, cpu_b, warmup, per_round,
                                  ipc::WaitPolicy::spinning(spin)));
    add_ring(line_case,
             run_ring(64, 64, cpu_a, cpu_b, warmup, per_round, ipc::WaitPolicy::spinning(spin)));
    mpi = run_mpi(mpirun_path, mpi_binary_path, mpi_args, product_command_bytes,
                  product_reply_bytes, per_round, warmup, cpu_a, cpu_b, initial_affinity,
                  std::chrono::seconds(mpi_timeout_s));
    if (mpi.stats) {
      mpi_case.rounds.push_back(*mpi.stats);
    } else {
      mpi_case.problem = mpi.problem;
    }
  }
  Case futex_case{"(c) ring, StepCommand/StepReply, futex", {}, "-", true, {}};
  add_ring(futex_case,
           ring_pingpong(cpu_a, cpu_b, warmup / 10, sleeping_iterations,
                         ipc::WaitPolicy::sleeping(), *product.command, *product.reply));

  const auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const auto field = [](const Case& c, double Stats::*f) {
    std::vector<double> v;
    for (const Stats& st : c.rounds) v.push_back(st.*f);
    return v;
  };
  const double floor_median = median_of(field(floor_case, &Stats::median_ns));

  fmt::print("{:<50} {:>10} {:>10} {:>10} {:>12} {:>16}\n", "case (median over rounds)",
             "median ns", "p99 ns", "min ns", "median/floor", "futex wake/sleep");
  fmt::print("{:<50} {:>10} {:>10} {:>10} {:>12} {:>16}\n", "", "", "", "", "", "per round trip");
  bool all_ok = true;
  for (const Case* c : {&floor_case, &ring_case, &plain_case, &line_case, &futex_case, &mpi_case}) {
    if (c->rounds.empty()) {
      fmt::print("{:<50} {}\n", c->label, c->problem.empty() ? "no figure" : c->problem);
      continue;
    }
    const double med = median_of(field(*c, &Stats::median_ns));
    fmt::print("{:<50} {:>10.1f} {:>10.1f} {:>10.1f} {:>11.2f}x {:>16}{}\n", c->label, med,
               median_of(field(*c, &Stats::p99_ns)), median_of(field(*c, &Stats::min_ns)),
               med / floor_median, c->futex,
               c->ok ? "" : "  FAILED (reply out of order or worker error)");
    all_ok = all_ok && c->ok;
  }

  fmt::print("\n(d) command: {}\n", mpi.command.empty() ? "-" : mpi.command);
  if (!mpi.library.empty()) fmt::print("(d) library: {}\n", mpi.library);
  for (const auto& line : mpi.bindings) fmt::print("(d) mpirun --report-bindings: {}\n", line);
  if (mpi.stats) {
    fmt::print("(d) ranks: {}{}\n", mpi.rank_cpus,
               mpi.same_cpus ? fmt::format(" = the CPUs of (a)-(c)")
                             : fmt::format("; NOT the CPUs of (a)-(c) ({}, {})", cpu_a, cpu_b));
    if (!mpi.problem.empty()) fmt::print("(d) warning: {}\n", mpi.problem);
  }

  // Per round: the floor (how fast the machine was) and the two ratios of the goal.
  fmt::print("\n{:>6} {:>10} {:>10} {:>10} {:>12} {:>14}\n", "round", "(a) ns", "(b) ns", "(d) ns",
             "(b)/(a)", "(b)/(d)");
  std::vector<double> to_floor, to_mpi;
  for (std::size_t r = 0; r < rounds; ++r) {
    const double fa = floor_case.rounds[r].median_ns;
    const double fb = r < ring_case.rounds.size() ? ring_case.rounds[r].median_ns : 0.0;
    const bool has_mpi = r < mpi_case.rounds.size();
    const double fd = has_mpi ? mpi_case.rounds[r].median_ns : 0.0;
    if (fb > 0) to_floor.push_back(fb / fa);
    if (fb > 0 && has_mpi) to_mpi.push_back(fb / fd);
    fmt::print("{:>6} {:>10.1f} {:>10.1f} {:>10} {:>11.2f}x {:>13}\n", r + 1, fa, fb,
               has_mpi ? fmt::format("{:.1f}", fd) : "-", fb / fa,
               has_mpi ? fmt::format("{:.2f}x", fb / fd) : "-");
  }
  const auto spread = [&](const std::vector<double>& v) {
    return fmt::format("{:.2f}..{:.2f}", *std::min_element(v.begin(), v.end()),
                       *std::max_element(v.begin(), v.end()));
  };
  const auto verdict = [](double ratio, double goal) { return ratio <= goal ? "met" : "NOT met"; };
  fmt::print(
      "\ngoal: (b) median <= 1.5x the floor (a) and <= 0.67x the OpenMPI figure (d), "
      "median of the per-round ratios over {} rounds\n",
      rounds);
  if (!to_floor.empty()) {
    const double m = median_of(to_floor);
    fmt::print("ring/floor   (b)/(a): {:.2f}x (rounds {})  -> {}\n", m, spread(to_floor),
               verdict(m, 1.5));
  }
  if (!to_mpi.empty()) {
    const double m = median_of(to_mpi);
    fmt::print("ring/OpenMPI (b)/(d): {:.2f}x (rounds {})  -> {}\n", m, spread(to_mpi),
               verdict(m, 0.67));
  } else {
    fmt::print("ring/OpenMPI (b)/(d): no OpenMPI figure ({})\n", mpi_case.problem);
  }
  return all_ok ? 0 : 1;
}
