// Benchmarks of the process runtime, in one run:
//  1. overhead per macro step with 2, 8, 32 nearly-no-op subsystems (one light mass each, fixed
//     H, kappa = 0, no estimator) on this machine's cores, in-process vs one process per
//     subsystem (oversubscribed: sleeping waiters must keep it bounded), and the floor of the
//     processes column on this machine: the same number of forked processes doing nothing but the
//     runtime's wake-up pattern of one macro step (wake_floor_us);
//  2. parallel efficiency as the issue states it: a chain of two equal subsystems with the
//     process executor, the whole run (master and both workers) on 1 CPU vs on 2 CPUs, as with
//     `taskset -c 0` vs `taskset -c 0,1`; T(1 CPU)/T(2 CPUs), issue goal >= 1.85; for two
//     macro-step sizes (about 4 and 13 micro steps per macro step by default).
//
// Part 2 runs every measurement in a fresh process: the bench forks, the child restricts itself
// with sched_setaffinity (what taskset does) and execs this program with --efficiency-single,
// which does one run and prints one `result` line. The workers are spawned unpinned (as with
// --pin none) and inherit the mask, so the master and the workers compete for exactly the CPUs
// given; a process also sizes its wait policy from that mask. Every configuration runs
// --repeats times, interleaved (1, 2, 1, 2, ...) so that drifting background load hits both
// alike; the medians are compared. The printed taskset commands repeat one measurement by hand.
// Wall-clock ratios on a shared machine are noisy; the CPU time column shows whether the runs
// got their CPUs.
#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ipc/arrival_counter.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/ipc/spsc_ring.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/worker/worker.hpp"

using namespace macrostep;

namespace {

library::ChainParameters chain(std::size_t masses, double mass) {
  library::ChainSpec s;
  s.masses = masses;
  s.mass = library::ValueSpec::fixed(mass);
  s.element.c = 1e5;
  s.element.d = 1.0;
  s.element.C = 1e9;
  s.element.D = 1e4;
  s.x0 = library::ValueSpec::uniform(-1e-3, 1e-3);
  s.v0 = library::ValueSpec::uniform(-1e-1, 1e-1);
  s.seed = 4;
  return library::realize(s);
}

struct Timing {
  double seconds = 0.0;  // run_explicit only (the workers are running already)
  std::uint64_t steps = 0;
  // Shares of the run's TimeBreakdown, to see how integration-bound it is: solver (the busier
  // subsystem's integration), idle (waiting for the slower one), communication (the rest of
  // the slowest send-to-reply time).
  double solver_share = 0.0;
  double idle_share = 0.0;
  double communication_share = 0.0;
  std::vector<long> micro_steps;       // per subsystem
  std::vector<double> solver_seconds;  // per subsystem: its nominal integrations, summed
  std::uint64_t checksum = 0;  // bits of the final coupling variables: the same work every run
};

Timing run(const library::ChainParameters& p, std::size_t subsystems, bool processes, double h,
           double t_end, const std::string& binary, std::vector<std::vector<unsigned>> cpusets,
           bool host_first = false, std::vector<std::vector<std::size_t>> groups = {},
           int threads = 1) {
  const auto boundaries = library::equal_partition(p.size(), subsystems);
  const auto sys = system::make_chain_system(p, boundaries);
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = t_end;
  o.control.h = h;
  o.control.kappa_fixed = 0;
  o.control.estimator = control::Estimator::kNone;
  const auto u0 = sys.initial_couplings();
  std::unique_ptr<executors::Executor> ex;
  if (processes) {
    executors::ProcessOptions po;
    po.rollback = false;
    po.extra_runs = 0;
    po.threads = threads;
    po.executable = binary;
    po.cpusets = std::move(cpusets);
    po.host_first_subsystem = host_first;
    po.groups = std::move(groups);
    ex = std::make_unique<executors::ProcessExecutor>(
        sys,
        library::chain_segment_descriptions(std::make_shared<const library::ChainParameters>(p),
                                            boundaries),
        u0, po);
  } else {
    executors::InProcessOptions io;
    io.rollback = false;
    io.threads = 1;
    ex = std::make_unique<executors::InProcessExecutor>(sys, u0, io);
  }
  std::uint64_t checksum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = schemes::run_explicit(sys, *ex, o, [&](const schemes::AcceptedPoint& a) {
    checksum = 0;
    for (double u : a.u) checksum = (checksum * 1099511628211ULL) ^ std::bit_cast<std::uint64_t>(u);
  });
  Timing t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.steps = r.steps.accepted;
  const auto share = [&](std::int64_t ns) {
    return r.time.total_ns > 0 ? static_cast<double>(ns) / static_cast<double>(r.time.total_ns)
                               : 0.0;
  };
  t.solver_share = share(r.time.solver_ns);
  t.idle_share = share(r.time.idle_ns);
  t.communication_share = share(r.time.communication_ns);
  for (const auto& st : r.subsystem_stats) t.micro_steps.push_back(st.steps);
  for (const auto ns : r.subsystem_solver_ns) t.solver_seconds.push_back(1e-9 * ns);
  t.checksum = checksum;
  return t;
}

// The floor of the processes column: `n` forked processes that do per round only what a worker
// does per macro step with the runtime's primitives (ipc/.../protocol.hpp,
// "Waking": wait on the bell, take the command from its ring, push a reply quietly, arrive at the
// reply counter), and a master that per round raises the counter's target, pushes n commands
// quietly, rings the bell once and waits until the last arrival; both with the wait policies of
// the process executor. No subsystem, no coupling, no accept: what a macro step of n processes
// costs on this machine before any work (wake-ups, context switches, cache and TLB refills).
// Microseconds per round, after `rounds` / 10 untimed rounds. The children use only the ring, the
// futex and _exit (part 1 may have left threads in this process).
double wake_floor_us(std::size_t n, std::size_t rounds) {
  struct Message {
    std::uint64_t round;
  };
  using Ring = ipc::SpscRing<Message, 4>;
  ipc::SegmentOptions options;
  options.region_bytes = 2 * n * (sizeof(Ring) + 64 * ipc::kCacheLine) + 4096;
  ipc::SharedSegment segment = ipc::SharedSegment::create(options);
  auto& bell = segment.construct<ipc::WaitWord>("bell");
  auto& replies = segment.construct<ipc::ArrivalCounter>("replies");
  std::vector<Ring*> commands, answers;
  for (std::size_t w = 0; w < n; ++w) {
    commands.push_back(&Ring::create(segment, fmt::format("cmd.{}", w)));
    answers.push_back(&Ring::create(segment, fmt::format("reply.{}", w)));
  }
  const std::size_t cpus = segment.identity().run_cpus;
  const ipc::WaitPolicy worker_policy = worker::worker_wait_policy(n, 0, cpus);
  const ipc::WaitPolicy master_policy = ipc::WaitPolicy::adaptive(n + 1, cpus);
  const std::size_t warmup = rounds / 10 + 1;
  std::vector<pid_t> children;
  for (std::size_t w = 0; w < n; ++w) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      Message m{};
      for (std::size_t r = 0; r < warmup + rounds; ++r) {
        commands[w]->pop_until(m, bell, worker_policy, ipc::WaitClock::time_point::max());
        answers[w]->push_quiet(m, worker_policy);
        replies.arrive();
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  std::chrono::steady_clock::time_point t0;
  for (std::size_t r = 0; r < warmup + rounds; ++r) {
    if (r == warmup) t0 = std::chrono::steady_clock::now();
    replies.expect_more(static_cast<std::uint32_t>(n));
    for (Ring* c : commands) c->push_quiet(Message{r}, master_policy);
    bell.notify();
    replies.wait(master_policy);
    Message m{};
    for (Ring* a : answers) (void)a->try_pop(m);
  }
  const double us =
      1e6 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const pid_t pid : children) ::waitpid(pid, nullptr, 0);
  return us / static_cast<double>(rounds);
}

// The efficiency workload, shared by the driver and the --efficiency-single child.
// Defaults: 2 x 2000 masses and an H of about five micro steps, so that a macro step is mostly
// integration (80-90 % solver time on 2 idle CPUs), and t_end for >= 1 s on 2 CPUs (1.3 s on
// this 2-core machine when idle).
struct Efficiency {
  std::size_t masses = 4000;
  double h = 5e-4;
  double t_end = 0.25;
};

// One measurement of part 2 as it runs in the child: whole-process wall time (fork to reap),
// CPU time of the child and the workers it reaped, and what the child printed.
struct Measurement {
  std::string cpus;
  double process_seconds = 0.0;
  double cpu_seconds = 0.0;
  Timing run;
};

std::string self_executable() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw std::runtime_error("readlink /proc/self/exe failed");
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

// The arguments of the child that does one efficiency run (argv[0] included).
std::vector<std::string> single_run_args(const std::string& self, const std::string& binary,
                                         const Efficiency& e) {
  return {self,
          "--efficiency-single",
          "--macrostep",
          binary,
          "--efficiency-masses",
          fmt::format("{}", e.masses),
          "--efficiency-h",
          fmt::format("{}", e.h),
          "--efficiency-t-end",
          fmt::format("{}", e.t_end)};
}

// Forks; the child restricts itself to `cpus` (inherited by everything it starts) and execs
// `args`; its stdout comes back through a pipe and is parsed for the `result` line. Everything
// the child needs is prepared before fork(): part 1 may have left threads in this process, so
// the child only makes system calls (no allocation) until it execs.
Measurement measure(const std::vector<unsigned>& cpus, const std::vector<std::string>& args) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned c : cpus) CPU_SET(c, &set);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[1]);
    if (::sched_setaffinity(0, sizeof(set), &set) != 0) ::_exit(120);  // what taskset does
    ::execv(argv[0], argv.data());
    ::_exit(121);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  Measurement m;
  m.cpus = placement::format_pu_list(cpus);
  m.process_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // wait4 reports the child together with the children it reaped: the master and the workers.
  const auto sec = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + 1e-6 * static_cast<double>(tv.tv_usec);
  };
  m.cpu_seconds = sec(usage.ru_utime) + sec(usage.ru_stime);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw std::runtime_error(fmt::format("the run on CPUs {} failed ({}): {}", m.cpus,
                                         code == 120   ? "sched_setaffinity refused the CPUs"
                                         : code == 121 ? fmt::format("cannot exec {}", args[0])
                                                       : fmt::format("wait status {:#x}", status),
                                         out));
  }
  unsigned long long steps = 0, checksum = 0;
  long micro[2] = {0, 0};
  double solver[2] = {0.0, 0.0};
  const auto at = out.find("result ");
  if (at == std::string::npos ||
      std::sscanf(
          out.c_str() + at,
          "result run_s=%lf steps=%llu micro_steps=%ld,%ld solver_s=%lf,%lf solver=%lf idle=%lf "
          "communication=%lf checksum=%llx",
          &m.run.seconds, &steps, &micro[0], &micro[1], &solver[0], &solver[1], &m.run.solver_share,
          &m.run.idle_share, &m.run.communication_share, &checksum) != 10) {
    throw std::runtime_error("the run on CPUs " + m.cpus + " printed no result line: " + out);
  }
  m.run.steps = steps;
  m.run.micro_steps = {micro[0], micro[1]};
  m.run.solver_seconds = {solver[0], solver[1]};
  m.run.checksum = checksum;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int efficiency(const std::string& binary, const Efficiency& e, std::size_t repeats,
               std::vector<unsigned> cpus) {
  const std::vector<unsigned> usable = placement::current_affinity();
  if (cpus.empty()) cpus = usable;
  for (unsigned c : cpus) {
    // sched_setaffinity accepts a mask with some usable CPU in it: check each one here.
    if (std::find(usable.begin(), usable.end(), c) == usable.end()) {
      throw std::runtime_error(
          fmt::format("--cpus: CPU {} is not usable by this process (usable: {})", c,
                      placement::format_pu_list(usable)));
    }
  }
  if (cpus.size() == 2 && cpus[0] == cpus[1])
    throw std::runtime_error("--cpus: two different CPUs");
  if (cpus.size() < 2) {
    fmt::print("\n2. parallel efficiency: skipped, this process may use only CPU {}\n",
               placement::format_pu_list(cpus));
    return 0;
  }
  const std::vector<unsigned> one = {cpus[0]};
  const std::vector<unsigned> two = {cpus[0], cpus[1]};
  const std::vector<std::string> args = single_run_args(self_executable(), binary, e);
  fmt::print(
      "\n2. parallel efficiency: {} masses in 2 equal subsystems, fixed H = {} s, kappa 0, no "
      "estimator, t_end = {} s, process executor, workers unpinned (--pin none)\n"
      "   the whole run (master + 2 workers) restricted to 1 CPU vs 2 CPUs, {} times each, "
      "interleaved; one measurement by hand:\n",
      e.masses, e.h, e.t_end, repeats);
  for (const auto* set : {&one, &two}) {
    fmt::print("     taskset -c {} {}\n", placement::format_pu_list(*set), fmt::join(args, " "));
  }
  // integration: each subsystem's wall time in its integrations, summed over the steps (wall
  // time, so on 1 CPU it also counts any wait for the CPU while the other worker runs); solver /
  // idle / comm: shares of the run's time breakdown; CPUs busy: CPU / process time, how many
  // CPUs the run had on average (below ~1.8 on 2 CPUs: other load on the machine, or waiting).
  fmt::print("{:>4} {:>5} {:>8} {:>12} {:>8} {:>10} {:>6} {:>12} {:>17} {:>7} {:>5} {:>5}\n", "run",
             "CPUs", "run [s]", "process [s]", "CPU [s]", "CPUs busy", "steps", "micro steps",
             "integration [s]", "solver", "idle", "comm");
  std::vector<double> run1, run2, proc1, proc2;
  std::uint64_t checksum = 0;
  bool same = true;
  for (std::size_t r = 0; r < repeats; ++r) {
    for (const auto* set : {&one, &two}) {
      const Measurement m = measure(*set, args);
      fmt::print(
          "{:>4} {:>5} {:>8.3f} {:>12.3f} {:>8.3f} {:>10.2f} {:>6} {:>12} {:>17} {:>6.0f}% "
          "{:>4.0f}% {:>4.0f}%\n",
          r + 1, m.cpus, m.run.seconds, m.process_seconds, m.cpu_seconds,
          m.cpu_seconds / m.process_seconds, m.run.steps,
          fmt::format("{}", fmt::join(m.run.micro_steps, "+")),
          fmt::format("{:.3f}", fmt::join(m.run.solver_seconds, "+")), 100.0 * m.run.solver_share,
          100.0 * m.run.idle_share, 100.0 * m.run.communication_share);
      std::fflush(stdout);
      (set == &one ? run1 : run2).push_back(m.run.seconds);
      (set == &one ? proc1 : proc2).push_back(m.process_seconds);
      if (r == 0 && set == &one) checksum = m.run.checksum;
      same = same && m.run.checksum == checksum;
    }
  }
  const double r1 = median(run1), r2 = median(run2), p1 = median(proc1), p2 = median(proc2);
  fmt::print(
      "median run (run_explicit): 1 CPU {:.3f} s, 2 CPUs {:.3f} s; whole process (startup, run, "
      "shutdown): 1 CPU {:.3f} s, 2 CPUs {:.3f} s\n",
      r1, r2, p1, p2);
  fmt::print("T(1 CPU)/T(2 CPUs) = {:.2f} (run), {:.2f} (whole process) (issue goal >= 1.85)\n",
             r1 / r2, p1 / p2);
  fmt::print("final coupling variables bit-identical in every run: {}\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Process-runtime overhead and parallel efficiency"};
  std::string binary = MACROSTEP_BINARY;
  std::vector<std::size_t> counts = {2, 8, 32};
  double overhead_t_end = 2e-3;
  Efficiency e;
  std::size_t repeats = 3;
  std::string part = "all";
  std::string grouped_processes = "auto";
  int grouped_threads = 1;
  std::vector<unsigned> cpus;
  bool single = false;
  app.add_option("--macrostep", binary, "the macrostep binary (worker processes)");
  app.add_option("--part", part, "which part to run")
      ->check(CLI::IsMember({"all", "overhead", "efficiency"}));
  app.add_option("--subsystems", counts, "subsystem counts of the overhead runs")->delimiter(',');
  app.add_option("--overhead-t-end", overhead_t_end, "simulated time of the overhead runs [s]");
  app.add_option("--processes", grouped_processes,
                 "worker processes of the grouped column: N | auto | per-subsystem");
  app.add_option("--grouped-threads", grouped_threads,
                 "threads of a group's runs in the grouped column (1: one after the other; 0: "
                 "an arena of all CPUs)");
  app.add_option("--efficiency-masses", e.masses, "masses of the efficiency chain");
  std::vector<double> hs = {5e-4, 2e-3};
  app.add_option("--efficiency-h", hs,
                 "fixed macro-step sizes of the efficiency runs [s], one measurement series "
                 "each (the first only with --efficiency-single)")
      ->delimiter(',');
  app.add_option("--efficiency-t-end", e.t_end, "simulated time of the efficiency runs [s]");
  app.add_option("--repeats", repeats, "measurements per CPU count (median)")
      ->check(CLI::PositiveNumber);
  app.add_option("--cpus", cpus,
                 "the two CPUs of the efficiency runs (default: the first two "
                 "usable), the first alone for 1 CPU")
      ->delimiter(',');
  app.add_flag("--efficiency-single", single,
               "one efficiency run on the CPUs this process may use; prints a `result` line");
  CLI11_PARSE(app, argc, argv);
  if (!cpus.empty() && cpus.size() != 2) {
    fmt::print(stderr, "--cpus: give two CPUs, e.g. --cpus 0,1\n");
    return 2;
  }

  if (hs.empty()) {
    fmt::print(stderr, "--efficiency-h: give at least one step size\n");
    return 2;
  }
  e.h = hs.front();
  if (single) {
    try {
      const Timing t = run(chain(e.masses, 1.0), 2, true, e.h, e.t_end, binary, {});
      fmt::print(
          "result run_s={:.6f} steps={} micro_steps={} solver_s={:.6f} solver={:.4f} idle={:.4f} "
          "communication={:.4f} checksum={:016x}\n",
          t.seconds, t.steps, fmt::join(t.micro_steps, ","), fmt::join(t.solver_seconds, ","),
          t.solver_share, t.idle_share, t.communication_share, t.checksum);
      return 0;
    } catch (const std::exception& ex) {  // e.g. an unstable H: say so in the parent's report
      fmt::print("the run failed: {}\n", ex.what());
      return 1;
    }
  }

  if (part != "efficiency") {
    const double h = 1e-5;
    fmt::print(
        "1. overhead per macro step: one 1 kg mass per subsystem, fixed H = {} s, kappa 0, "
        "t_end = {} s, one thread per executor\n",
        h, overhead_t_end);
    // "hosted": the master runs subsystem 1 itself (ProcessOptions::host_first_subsystem).
    // "floor": wake_floor_us, the wake-ups and context switches of the processes column alone.
    // "grouped": the subsystems in groups, --processes worker processes (auto: one per usable
    // core, placement::resolve_process_count), each group's runs one after the other.
    const placement::Topology topology = placement::Topology::detect();
    fmt::print("{:>11} {:>8} {:>16} {:>15} {:>7} {:>12} {:>7} {:>11} {:>12} {:>7}\n", "subsystems",
               "steps", "in-process [us]", "processes [us]", "ratio", "hosted [us]", "ratio",
               "floor [us]", "grouped [us]", "ratio");
    for (std::size_t n : counts) {
      const auto p = chain(n, 1.0);
      const Timing a = run(p, n, false, h, overhead_t_end, binary, {});
      const Timing b = run(p, n, true, h, overhead_t_end, binary, {});
      const Timing c = run(p, n, true, h, overhead_t_end, binary, {}, true);
      const double ua = 1e6 * a.seconds / static_cast<double>(a.steps);
      const double ub = 1e6 * b.seconds / static_cast<double>(b.steps);
      const double uc = 1e6 * c.seconds / static_cast<double>(c.steps);
      const double floor = wake_floor_us(n, b.steps);
      const std::size_t processes = placement::resolve_process_count(
          placement::parse_process_count(grouped_processes), n, topology);
      const Timing d = run(p, n, true, h, overhead_t_end, binary, {}, false,
                           placement::process_groups(0, n, processes), grouped_threads);
      const double ud = 1e6 * d.seconds / static_cast<double>(d.steps);
      fmt::print(
          "{:>11} {:>8} {:>16.1f} {:>15.1f} {:>7.2f} {:>12.1f} {:>7.2f} {:>11.1f} {:>12.1f} "
          "{:>7.2f}\n",
          n, b.steps, ua, ub, ub / ua, uc, uc / ua, floor, ud, ud / ua);
      std::fflush(stdout);
    }
  }
  if (part == "overhead") return 0;
  try {
    // Several H: with few micro steps per macro step, a subsystem that needs one micro step
    // more than the other in a step makes the other wait (idle), which larger H averages out.
    int status = 0;
    for (double h : hs) {
      e.h = h;
      status = std::max(status, efficiency(binary, e, repeats, cpus));
    }
    return status;
  } catch (const std::exception& ex) {
    fmt::print(stderr, "parallel efficiency: {}\n", ex.what());
    return 1;
  }
}
