// The process executor (runtime/executors/process_executor.hpp): bit-identical to the
// in-process reference (DESIGN.md contract 1), also oversubscribed (12 processes on 2 cores),
// and its failure paths (contract 5): a killed worker is reported with its subsystem and macro
// step, a killed master takes its workers with it, and no segment is left behind.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/child_processes.hpp"
#include "../support/read_file.hpp"
#include "../support/same_bits.hpp"
#include "../support/test_chain.hpp"
#include "explicit_options.hpp"

namespace macrostep {
namespace {

using macrostep::testing::children_of;
using macrostep::testing::process_gone;
using macrostep::testing::read_file;
using macrostep::testing::segments_of_pid_exist;

using macrostep::testing::same_bits;

// The worker processes' models: the chain's segments.
std::vector<library::ModelDescription> chain_models(const library::ChainParameters& p,
                                                    const std::vector<std::size_t>& boundaries) {
  return library::chain_segment_descriptions(std::make_shared<const library::ChainParameters>(p),
                                             boundaries);
}

struct CosimRun {
  std::vector<double> times;
  std::vector<std::vector<double>> u;
  std::vector<std::vector<double>> y;
  std::vector<std::vector<double>> z;  // accepted states of every subsystem, concatenated
  schemes::SchemeResult result;
};

executors::ProcessOptions process_options(const schemes::SchemeOptions& o) {
  executors::ProcessOptions po;
  po.solver = testing::tight_solver();
  po.rollback = schemes::needs_rollback(o);
  po.executable = MACROSTEP_BINARY;
  return po;
}

CosimRun run(const system::CoupledSystem& sys, executors::Executor& ex,
             const schemes::SchemeOptions& o) {
  CosimRun r;
  const auto scheme = schemes::make_scheme(o);  // explicit, or the iterative schemes
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        r.times.push_back(p.time);
        r.u.emplace_back(p.u.begin(), p.u.end());
        std::vector<double> all;
        for (const auto& y : p.outputs) all.insert(all.end(), y.begin(), y.end());
        r.y.push_back(all);
        std::vector<double> z;
        for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
          std::vector<double> zi(sys.subsystem(i).state_size());
          ex.accepted_state(i, zi);
          z.insert(z.end(), zi.begin(), zi.end());
        }
        r.z.push_back(z);
      },
      {}, r.result);
  return r;
}

using testing::controlled;
using testing::test_chain;

schemes::SchemeOptions fixed_step(double t_end, double h) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = t_end;
  o.control.h = h;
  o.control.kappa_fixed = 2;
  o.control.estimator = control::Estimator::kNone;
  return o;
}

void expect_identical(const CosimRun& a, const CosimRun& b) {
  ASSERT_EQ(a.times.size(), b.times.size());
  EXPECT_TRUE(same_bits(a.times, b.times));
  for (std::size_t k = 0; k < a.times.size(); ++k) {
    ASSERT_TRUE(same_bits(a.u[k], b.u[k])) << "coupling variables at macro point " << k;
    ASSERT_TRUE(same_bits(a.y[k], b.y[k])) << "outputs at macro point " << k;
    ASSERT_TRUE(same_bits(a.z[k], b.z[k])) << "accepted states at macro point " << k;
  }
  EXPECT_EQ(a.result.steps.accepted, b.result.steps.accepted);
  EXPECT_EQ(a.result.steps.rejected, b.result.steps.rejected);
}

void check_bit_identity(std::size_t masses, std::size_t subsystems, const schemes::SchemeOptions& o,
                        bool host_first = false, const runner::JumpOptions& jumps = {}) {
  const auto p = test_chain(masses);
  const auto boundaries = library::equal_partition(p.size(), subsystems);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto u0 = sys.initial_couplings();
  executors::InProcessOptions io;
  io.solver = testing::tight_solver();
  io.rollback = schemes::needs_rollback(o);
  io.jumps = jumps;
  executors::InProcessExecutor in_process(sys, u0, io);
  const CosimRun reference = run(sys, in_process, o);
  auto po = process_options(o);
  po.host_first_subsystem = host_first;
  po.jumps = jumps;
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), u0, po);
  const CosimRun processes = run(sys, ex, o);
  expect_identical(reference, processes);
  EXPECT_GT(reference.times.size(), 5u);
  // The work counters (nominal and extra runs, rejected attempts included) agree as well.
  for (std::size_t i = 0; i < subsystems; ++i) {
    const auto a = in_process.total_stats(i), b = ex.total_stats(i);
    EXPECT_GT(b.steps, 0);
    EXPECT_EQ(a.steps, b.steps) << "subsystem " << i + 1;
    EXPECT_EQ(a.residual_evals, b.residual_evals) << "subsystem " << i + 1;
    EXPECT_EQ(a.jacobian_evals, b.jacobian_evals) << "subsystem " << i + 1;
    EXPECT_EQ(a.error_test_failures, b.error_test_failures) << "subsystem " << i + 1;
  }
}

TEST(ProcessExecutor, ControlledExMDWithComparisonRunsIsBitIdentical2) {
  check_bit_identity(20, 2, controlled(5e-4, control::Estimator::kExMD, 1e-5));
}

TEST(ProcessExecutor, ControlledExMDIsBitIdentical3) {
  check_bit_identity(21, 3, controlled(5e-4, control::Estimator::kExMD, 1e-5));
}

TEST(ProcessExecutor, ControlledExCVIsBitIdentical3) {
  check_bit_identity(21, 3, controlled(5e-4, control::Estimator::kExCV, 1e-5));
}

// Master and both workers squeezed onto one CPU (the workers inherit the master's mask): the
// sleeping waiters hand the core over, and the numbers do not change. The workers sleep at once
// here on any machine, so the accepts and rejects are queued without a wake-up and reach them
// with the next step's (ProcessExecutor's deferred acknowledgements), and accepted_state() has to
// collect them itself. (A co-simulation needs two subsystems at least, so "fewer processes than
// cores" is this case and the 2-process ones.)
TEST(ProcessExecutor, ControlledExMDIsBitIdenticalOnOneCpu) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  check_bit_identity(20, 2, controlled(3e-4, control::Estimator::kExMD, 1e-5));
  ASSERT_EQ(sched_setaffinity(0, sizeof(before), &before), 0);
}

// The master runs subsystem 1 itself (ProcessOptions::host_first_subsystem): the same runner
// code, so the same bits, with comparison runs, rejections and oversubscription.
TEST(ProcessExecutor, MasterHostingSubsystemOneIsBitIdentical) {
  check_bit_identity(20, 2, controlled(5e-4, control::Estimator::kExMD, 1e-5), true);
  check_bit_identity(24, 12, controlled(2e-4, control::Estimator::kExMD, 1e-5), true);
  check_bit_identity(21, 3, fixed_step(2e-4, 1e-5), true);
}

// Every jump handling travels to the workers and gives the in-process bits: the shifted
// history of nominal and comparison runs (exMD with rejections) and of fixed steps, restarts, the
// micro-step limit.
TEST(ProcessExecutor, JumpHandlingIsBitIdentical) {
  using runner::JumpPolicy;
  const auto controlled_exmd = controlled(5e-4, control::Estimator::kExMD, 1e-5);
  check_bit_identity(21, 3, controlled_exmd, false, {JumpPolicy::kShift, 0});
  check_bit_identity(20, 2, controlled_exmd, true, {JumpPolicy::kShift, 0});
  check_bit_identity(21, 3, fixed_step(2e-4, 1e-5), false, {JumpPolicy::kShift, 0});
  check_bit_identity(21, 3, fixed_step(2e-4, 1e-5), false, {JumpPolicy::kRestartAuto, 0});
  check_bit_identity(21, 3, controlled_exmd, false, {JumpPolicy::kRestart, 3});
}

TEST(ProcessExecutor, FixedStepExHIsBitIdentical12Oversubscribed) {
  check_bit_identity(24, 12, fixed_step(2e-4, 1e-5));
}

TEST(ProcessExecutor, ControlledExMDIsBitIdentical12Oversubscribed) {
  check_bit_identity(24, 12, controlled(2e-4, control::Estimator::kExMD, 1e-5));
}

// The iterative schemes (METHODS §4): every corrector pass re-integrates from T_N, perturbed
// runs are extra runs of the workers' arenas, rejections (imMD control, corrector failures)
// restore T_N; the numbers do not depend on the executor (contract 1).
schemes::SchemeOptions iterative(schemes::SchemeOptions o, corrector::IterationKind kind,
                                 corrector::JacobianKind jacobian) {
  corrector::CorrectorOptions c;
  c.iteration = kind;
  c.jacobian = corrector::jacobian_name(jacobian);
  o.corrector = c;
  return o;
}

TEST(ProcessExecutor, ImplicitFdImMDIsBitIdentical3) {
  check_bit_identity(
      21, 3,
      iterative(controlled(5e-4, control::Estimator::kImMD, 1e-5),
                corrector::IterationKind::kNewton, corrector::JacobianKind::kFiniteDifference));
}

TEST(ProcessExecutor, ImplicitSapImCVIsBitIdentical3) {
  check_bit_identity(21, 3,
                     iterative(controlled(5e-4, control::Estimator::kImCV, 1e-5),
                               corrector::IterationKind::kNewton, corrector::JacobianKind::kSap));
}

TEST(ProcessExecutor, SemiImplicitAndWaveformAreBitIdentical) {
  check_bit_identity(21, 3,
                     iterative(controlled(5e-4, control::Estimator::kImMD, 1e-5),
                               corrector::IterationKind::kSemiImplicit,
                               corrector::JacobianKind::kFiniteDifference));
  check_bit_identity(21, 3,
                     iterative(fixed_step(2e-4, 1e-5), corrector::IterationKind::kWaveform,
                               corrector::JacobianKind::kFiniteDifference));
}

TEST(ProcessExecutor, ReuseQuasiNewtonHeunAndBroydenAreBitIdentical3) {
  for (auto j : {corrector::JacobianKind::kReuse, corrector::JacobianKind::kQuasiNewton,
                 corrector::JacobianKind::kHeun, corrector::JacobianKind::kBroyden}) {
    check_bit_identity(21, 3,
                       iterative(controlled(5e-4, control::Estimator::kImMD, 1e-5),
                                 corrector::IterationKind::kNewton, j));
  }
}

TEST(ProcessExecutor, ImplicitIsBitIdentical12Oversubscribed) {
  check_bit_identity(
      24, 12,
      iterative(controlled(2e-4, control::Estimator::kImMD, 1e-5),
                corrector::IterationKind::kNewton, corrector::JacobianKind::kFiniteDifference));
}

// Every scheme and interface Jacobian with one TBB thread (perturbed runs one after
// another) or two (side by side): the same bits.
TEST(InProcessExecutor, IterativeSchemesAreBitIdenticalWithOneAndTwoThreads) {
  using corrector::IterationKind;
  using corrector::JacobianKind;
  const auto p = test_chain(21);
  const auto boundaries = library::equal_partition(p.size(), 3);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto imMD = controlled(5e-4, control::Estimator::kImMD, 1e-5);
  const std::vector<schemes::SchemeOptions> cases = {
      iterative(imMD, IterationKind::kNewton, JacobianKind::kFiniteDifference),
      iterative(imMD, IterationKind::kNewton, JacobianKind::kSap),
      iterative(imMD, IterationKind::kNewton, JacobianKind::kReuse),
      iterative(imMD, IterationKind::kNewton, JacobianKind::kQuasiNewton),
      iterative(imMD, IterationKind::kNewton, JacobianKind::kHeun),
      iterative(imMD, IterationKind::kNewton, JacobianKind::kBroyden),
      iterative(controlled(5e-4, control::Estimator::kImCV, 1e-5), IterationKind::kNewton,
                JacobianKind::kFiniteDifference),
      iterative(imMD, IterationKind::kSemiImplicit, JacobianKind::kFiniteDifference),
      iterative(fixed_step(2e-4, 1e-5), IterationKind::kWaveform, JacobianKind::kFiniteDifference)};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    std::vector<CosimRun> runs;
    for (int threads : {1, 2}) {
      executors::InProcessOptions io;
      io.solver = testing::tight_solver();
      io.rollback = true;
      io.threads = threads;
      executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
      runs.push_back(run(sys, ex, cases[c]));
    }
    expect_identical(runs[0], runs[1]);
    EXPECT_GT(runs[0].result.corrector.passes, 0u);
  }
}

bool segment_exists(const std::string& name) {
  return std::filesystem::exists("/dev/shm" + name);
}

TEST(ProcessExecutor, SegmentIsUnlinkedAfterHandshake) {
  const auto p = test_chain(20);
  const auto boundaries = library::equal_partition(p.size(), 2);
  const auto sys = system::make_chain_system(p, boundaries);
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(),
                                process_options(fixed_step(1e-4, 1e-5)));
  EXPECT_FALSE(segment_exists(ex.segment_name()));
  EXPECT_EQ(ex.worker_pids().size(), 2u);
}

TEST(ProcessExecutor, KilledWorkerIsReportedWithSubsystemAndStep) {
  const auto p = test_chain(20);
  const auto boundaries = library::equal_partition(p.size(), 3);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto o = controlled(1.0, control::Estimator::kExMD, 1e-5);  // far longer than the test
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(),
                                process_options(o));
  const pid_t victim = ex.worker_pids()[1];
  std::size_t accepted = 0;
  std::chrono::steady_clock::time_point killed;
  try {
    schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint&) {
      if (++accepted == 5) {
        kill(victim, SIGKILL);
        killed = std::chrono::steady_clock::now();
      }
    });
    FAIL() << "the run went on without subsystem 2";
  } catch (const executors::WorkerFailure& e) {
    const auto noticed = std::chrono::steady_clock::now() - killed;
    EXPECT_EQ(e.subsystem(), 1u);
    EXPECT_GE(e.macro_step(), 5u);
    EXPECT_GT(e.time(), 0.0);
    EXPECT_NE(std::string(e.what()).find("subsystem 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
    std::cout << "noticed after " << std::chrono::duration<double>(noticed).count()
              << " s: " << e.what() << "\n";
  }
  EXPECT_FALSE(segment_exists(ex.segment_name()));
}

// Contract 5, a hang: a stopped worker (SIGSTOP: alive, but it evaluates nothing) is noticed
// through its progress counters after hang_timeout, killed, and reported.
TEST(ProcessExecutor, HungWorkerIsKilledAndReportedWithSubsystemAndStep) {
  const auto p = test_chain(20);
  const auto boundaries = library::equal_partition(p.size(), 3);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto o = controlled(1.0, control::Estimator::kExMD, 1e-5);  // far longer than the test
  auto po = process_options(o);
  po.hang_timeout = std::chrono::milliseconds(1000);
  po.poll_interval = std::chrono::milliseconds(50);
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(), po);
  const pid_t victim = ex.worker_pids()[1];
  std::size_t accepted = 0;
  std::chrono::steady_clock::time_point stopped;
  try {
    schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint&) {
      if (++accepted == 5) {
        kill(victim, SIGSTOP);
        stopped = std::chrono::steady_clock::now();
      }
    });
    FAIL() << "the run went on without subsystem 2";
  } catch (const executors::WorkerFailure& e) {
    const auto noticed = std::chrono::steady_clock::now() - stopped;
    const std::string what = e.what();
    EXPECT_EQ(e.subsystem(), 1u);
    EXPECT_GE(e.macro_step(), 5u);
    EXPECT_NE(what.find("subsystem 2"), std::string::npos) << what;
    EXPECT_NE(what.find("hangs"), std::string::npos) << what;
    EXPECT_NE(what.find("macro step"), std::string::npos) << what;
    std::cout << "noticed after " << std::chrono::duration<double>(noticed).count()
              << " s: " << what << "\n";
  }
  EXPECT_TRUE(process_gone(victim));  // killed and reaped, not left stopped
  EXPECT_FALSE(segment_exists(ex.segment_name()));
}

// The progress counters are not a clock: a worker that is merely slow keeps evaluating its
// model and is not mistaken for a hung one, even with a hang timeout far below its step time.
TEST(ProcessExecutor, SlowWorkerIsNotTakenForAHungOne) {
  const auto p = test_chain(8000);
  const auto boundaries = library::equal_partition(p.size(), 2);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto o = fixed_step(2e-3, 1e-3);  // 2 macro steps of about a second each
  auto po = process_options(o);
  po.hang_timeout = std::chrono::milliseconds(300);
  po.poll_interval = std::chrono::milliseconds(5);
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(), po);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(schemes::run_explicit(sys, ex, o, [](const schemes::AcceptedPoint&) {}));
  std::cout << "2 macro steps took "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s with a hang timeout of 0.3 s\n";
}

TEST(ProcessExecutor, KilledMasterTakesItsWorkersWithIt) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t master = macrostep::testing::fork_tied();
  ASSERT_GE(master, 0);
  if (master == 0) {
    close(fds[0]);
    try {
      const auto p = test_chain(20);
      const auto boundaries = library::equal_partition(p.size(), 3);
      const auto sys = system::make_chain_system(p, boundaries);
      const auto o = controlled(10.0, control::Estimator::kExMD, 1e-5);
      executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(),
                                    process_options(o));
      std::ostringstream msg;
      msg << ex.segment_name();
      for (pid_t pid : ex.worker_pids()) msg << ' ' << pid;
      msg << '\n';
      const std::string text = msg.str();
      if (write(fds[1], text.data(), text.size()) != static_cast<ssize_t>(text.size())) _exit(3);
      schemes::run_explicit(sys, ex, o, [](const schemes::AcceptedPoint&) {});
    } catch (...) {
      _exit(2);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<std::size_t>(n));
    if (text.find('\n') != std::string::npos) break;
  }
  close(fds[0]);
  std::istringstream in(text);
  std::string segment;
  std::vector<pid_t> workers;
  in >> segment;
  for (pid_t pid; in >> pid;) workers.push_back(pid);
  ASSERT_EQ(workers.size(), 3u) << text;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // mid-run
  ASSERT_EQ(kill(master, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(master, &status, 0), master);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  bool all_gone = false;
  while (!all_gone && std::chrono::steady_clock::now() < deadline) {
    all_gone = true;
    for (pid_t pid : workers) all_gone = process_gone(pid) && all_gone;
    if (!all_gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(all_gone);
  EXPECT_FALSE(segment_exists(segment));
}

TEST(ProcessExecutor, WorkerThatNeverShakesHandsIsNamed) {
  const auto p = test_chain(20);
  const auto boundaries = library::equal_partition(p.size(), 2);
  const auto sys = system::make_chain_system(p, boundaries);
  auto po = process_options(fixed_step(1e-4, 1e-5));
  po.executable = "/bin/true";  // exits at once, without a handshake
  try {
    executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(), po);
    FAIL() << "constructed without workers";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("subsystem 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("handshake"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(segments_of_pid_exist(getpid()));
}

TEST(ProcessExecutor, WorkersArePinnedToTheirCpusets) {
  const auto p = test_chain(20);
  const auto boundaries = library::equal_partition(p.size(), 2);
  const auto sys = system::make_chain_system(p, boundaries);
  auto po = process_options(fixed_step(1e-4, 1e-5));
  po.cpusets = {{0}, {}};  // subsystem 1 on PU 0, subsystem 2 unpinned
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(), po);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(ex.worker_pids()[0], sizeof(set), &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), 1);
  EXPECT_TRUE(CPU_ISSET(0, &set));
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  ASSERT_EQ(sched_getaffinity(ex.worker_pids()[1], sizeof(set), &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), CPU_COUNT(&mine));
}

// Regression: 2 x 5000 masses exceeded Cap'n Proto's default traversal limit, and 100
// subsystems overflowed the segment's region table (one region per subsystem, however many
// processes host them: the 100 start in 4 worker processes, because 100 sanitizer-built
// process starts were the slowest part of the executor tests).
TEST(ProcessExecutor, LargeSegmentsAndManySubsystemsStart) {
  for (const auto& [masses, subsystems, processes] :
       {std::tuple<std::size_t, std::size_t, std::size_t>{10000, 2, 2}, {200, 100, 4}}) {
    const auto p = test_chain(masses);
    const auto boundaries = library::equal_partition(p.size(), subsystems);
    const auto sys = system::make_chain_system(p, boundaries);
    // Sanitizer-built workers set up 25 subsystems each, beside other tests on 2 CPUs: no
    // handshake limit is to end the test.
    auto options = process_options(fixed_step(1e-4, 1e-5));
    options.handshake_timeout = std::chrono::seconds(300);
    if (processes < subsystems)
      options.groups = placement::process_groups(0, subsystems, processes);
    executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(),
                                  options);
    const auto pids = ex.worker_pids();
    EXPECT_EQ(pids.size(), subsystems);
    EXPECT_EQ(std::set<pid_t>(pids.begin(), pids.end()).size(), processes);
    // The mirrored initial state equals the in-process one.
    executors::InProcessExecutor in_process(sys, sys.initial_couplings(), {});
    for (std::size_t i : {std::size_t{0}, subsystems - 1}) {
      std::vector<double> a(sys.subsystem(i).state_size()), b(a.size());
      in_process.accepted_state(i, a);
      ex.accepted_state(i, b);
      EXPECT_TRUE(same_bits(a, b)) << masses << " masses, subsystem " << i + 1;
    }
  }
}

// A worker attaches to a running segment again. The segment's name is gone after the
// handshakes, so the new process attaches through the descriptor the master hands it; its rings
// are emptied first. Restarted at T_0, it runs bit-identically to the in-process reference.
TEST(ProcessExecutor, RestartedWorkersAttachThroughTheDescriptorAndRunBitIdentically) {
  const auto p = test_chain(21);
  const auto boundaries = library::equal_partition(p.size(), 3);
  const auto sys = system::make_chain_system(p, boundaries);
  const auto o = controlled(3e-4, control::Estimator::kExMD, 1e-5);
  executors::ProcessExecutor ex(sys, chain_models(p, boundaries), sys.initial_couplings(),
                                process_options(o));
  ASSERT_FALSE(segment_exists(ex.segment_name()));
  const auto before = ex.worker_pids();
  ex.restart_worker(1);
  ex.restart_worker(2);
  ex.restart_worker(2);
  const auto after = ex.worker_pids();
  EXPECT_EQ(after[0], before[0]);
  EXPECT_NE(after[1], before[1]);
  EXPECT_NE(after[2], before[2]);
  EXPECT_TRUE(process_gone(before[1]));
  EXPECT_TRUE(process_gone(before[2]));
  executors::InProcessOptions io;
  io.solver = testing::tight_solver();
  executors::InProcessExecutor in_process(sys, sys.initial_couplings(), io);
  const CosimRun reference = run(sys, in_process, o);
  const CosimRun restarted = run(sys, ex, o);
  expect_identical(reference, restarted);
  EXPECT_GT(reference.times.size(), 5u);
  EXPECT_THROW(ex.restart_worker(3), std::out_of_range);
}

}  // namespace
}  // namespace macrostep
