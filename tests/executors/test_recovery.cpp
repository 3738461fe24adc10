// Crash recovery of the process executor (ProcessOptions::max_restarts): a worker
// that dies or hangs at any point of a run (during a pass, an accept, a reject) is replaced,
// every worker continues from its exported accepted state (contract 2: an exact continuation,
// not a restart of the integrator), and the run is bit-identical to an undisturbed one
// (contract 1, against the in-process reference).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/test_chain.hpp"
#include "explicit_options.hpp"

namespace macrostep {
namespace {

using testing::controlled;
using testing::test_chain;

// Per accepted macro point: the time, the coupling variables and every subsystem's outputs.
struct RecoveryTrace {
  std::vector<double> values;
  std::size_t points = 0;
  schemes::SchemeResult result;
};

RecoveryTrace run_traced(const system::CoupledSystem& sys, executors::Executor& ex,
                         const schemes::SchemeOptions& o,
                         const std::function<void(std::size_t)>& after = {}) {
  RecoveryTrace t;
  const auto scheme = schemes::make_scheme(o);
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        t.values.push_back(p.time);
        t.values.insert(t.values.end(), p.u.begin(), p.u.end());
        for (const auto& y : p.outputs) t.values.insert(t.values.end(), y.begin(), y.end());
        ++t.points;
        if (after) after(p.step);
      },
      {}, t.result);
  return t;
}

struct Chain {
  library::ChainParameters p = test_chain(20);
  std::vector<std::size_t> boundaries = library::equal_partition(p.size(), 3);
  system::CoupledSystem sys = system::make_chain_system(p, boundaries);
  std::vector<library::ModelDescription> models = library::chain_segment_descriptions(
      std::make_shared<const library::ChainParameters>(p), boundaries);
};

RecoveryTrace reference(const Chain& c, const schemes::SchemeOptions& o,
                        const runner::JumpOptions& jumps = {}) {
  executors::InProcessOptions io;
  io.solver = testing::tight_solver();
  io.rollback = true;
  io.jumps = jumps;
  executors::InProcessExecutor ex(c.sys, c.sys.initial_couplings(), io);
  return run_traced(c.sys, ex, o);
}

executors::ProcessOptions recovering_options(unsigned max_restarts) {
  executors::ProcessOptions po;
  po.solver = testing::tight_solver();
  po.rollback = true;
  po.executable = MACROSTEP_BINARY;
  po.max_restarts = max_restarts;
  return po;
}

void expect_same_bits(const RecoveryTrace& a, const RecoveryTrace& b) {
  ASSERT_EQ(a.points, b.points);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)), 0)
      << "the recovered run differs from the undisturbed one";
  EXPECT_EQ(a.result.steps.accepted, b.result.steps.accepted);
  EXPECT_EQ(a.result.steps.rejected, b.result.steps.rejected);
}

// The check of the issue: 20 runs, each killing a random worker at a random macro step, at a
// random moment after that step's accept (at once: while the worker saves the accepted state
// or waits; after up to a few hundred microseconds: during the next pass). All complete,
// bit-identical to the undisturbed run. Controlled exMD: comparison runs and rejections.
TEST(Recovery, TwentyRandomWorkerKillsAllRecoverBitIdentically) {
  const Chain c;
  auto o = controlled(1e-3, control::Estimator::kExMD, 1e-5);
  o.control.step.safety = 1.0;  // Γ = 1: about every other step is rejected (seed 000 §3.4)
  const RecoveryTrace undisturbed = reference(c, o);
  ASSERT_GT(undisturbed.points, 60u);
  ASSERT_GT(undisturbed.result.steps.rejected, 0u);
  std::mt19937 random(20261123);
  for (int k = 0; k < 20; ++k) {
    const std::size_t at =
        std::uniform_int_distribution<std::size_t>(1, undisturbed.points - 10)(random);
    const std::size_t victim = std::uniform_int_distribution<std::size_t>(0, 2)(random);
    const int delay_us = std::uniform_int_distribution<int>(0, 400)(random);
    // The saved state is the one of the last accept (0), of a few steps ago (2 ms), or none
    // yet, so that the replacement repeats every step from T_0 (the default of 1 s).
    auto po = recovering_options(1);
    po.recovery_interval = std::chrono::milliseconds(std::array{0, 2, 1000}[k % 3]);
    executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
    std::thread killer;
    const RecoveryTrace disturbed = run_traced(c.sys, ex, o, [&](std::size_t step) {
      if (step == at) {
        const pid_t pid = ex.worker_pids()[victim];
        killer = std::thread([pid, delay_us] {
          std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
          kill(pid, SIGKILL);
        });
      } else if (step == at + 5) {
        killer.join();  // the kill falls within these five steps, however fast they are
      }
    });
    SCOPED_TRACE(::testing::Message() << "run " << k << ": subsystem " << victim + 1 << " killed "
                                      << delay_us << " us after step " << at);
    EXPECT_EQ(ex.recoveries(), 1u);
    expect_same_bits(undisturbed, disturbed);
  }
}

// The iterative scheme: corrector passes and perturbed runs (fd Jacobian) from T_N, with the
// first subsystem hosted by the master (it keeps running; only the workers are replaced).
TEST(Recovery, ImplicitRunWithAHostedSubsystemRecoversBitIdentically) {
  const Chain c;
  auto o = controlled(2e-4, control::Estimator::kImMD, 1e-5);
  corrector::CorrectorOptions corrector;
  corrector.iteration = corrector::IterationKind::kNewton;
  corrector.jacobian = corrector::jacobian_name(corrector::JacobianKind::kFiniteDifference);
  o.corrector = corrector;
  const RecoveryTrace undisturbed = reference(c, o);
  ASSERT_GT(undisturbed.points, 10u);
  auto po = recovering_options(2);
  po.host_first_subsystem = true;
  po.extra_runs = 2;
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const RecoveryTrace disturbed = run_traced(c.sys, ex, o, [&](std::size_t step) {
    if (step == 3 || step == undisturbed.points / 2) kill(ex.worker_pids()[1 + step % 2], SIGKILL);
  });
  EXPECT_EQ(ex.recoveries(), 2u);
  expect_same_bits(undisturbed, disturbed);
}

// jump_handling = shift: the replacement imports the last accepted input polynomial
// with the workspace (RunnerState) and shifts its history from it as the killed one would have.
TEST(Recovery, ShiftedHistoriesRecoverBitIdentically) {
  const Chain c;
  const auto o = controlled(1e-3, control::Estimator::kExMD, 1e-5);
  runner::JumpOptions shift;
  shift.policy = runner::JumpPolicy::kShift;
  const RecoveryTrace undisturbed = reference(c, o, shift);
  ASSERT_GT(undisturbed.points, 20u);
  auto po = recovering_options(2);
  po.jumps = shift;
  po.recovery_interval = std::chrono::milliseconds(0);  // the state of the last accept
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const RecoveryTrace disturbed = run_traced(c.sys, ex, o, [&](std::size_t step) {
    if (step == 7 || step == undisturbed.points / 2) kill(ex.worker_pids()[step % 3], SIGKILL);
  });
  EXPECT_EQ(ex.recoveries(), 2u);
  expect_same_bits(undisturbed, disturbed);
  // And the shift is not a no-op here: the same run keeping the histories differs.
  const RecoveryTrace kept = reference(c, o);
  EXPECT_FALSE(kept.points == undisturbed.points &&
               std::memcmp(kept.values.data(), undisturbed.values.data(),
                           kept.values.size() * sizeof(double)) == 0);
}

// A hang (SIGSTOP: alive, evaluating nothing) is found by the progress check, the worker is
// killed and replaced; the recovery is told through on_recovery.
TEST(Recovery, HungWorkerIsReplacedAndTold) {
  const Chain c;
  const auto o = controlled(1e-4, control::Estimator::kExMD, 1e-5);
  const RecoveryTrace undisturbed = reference(c, o);
  auto po = recovering_options(1);
  // Long enough that a slow replacement (TSan, an oversubscribed machine) is not taken for a
  // second hang.
  po.hang_timeout = std::chrono::milliseconds(2000);
  po.poll_interval = std::chrono::milliseconds(50);
  std::vector<std::string> told;
  po.on_recovery = [&told](const std::string& what) { told.push_back(what); };
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const pid_t victim = ex.worker_pids()[2];
  const RecoveryTrace disturbed = run_traced(c.sys, ex, o, [&](std::size_t step) {
    if (step == 7) kill(victim, SIGSTOP);
  });
  expect_same_bits(undisturbed, disturbed);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_NE(told[0].find("subsystem 3"), std::string::npos) << told[0];
  EXPECT_NE(told[0].find("hangs"), std::string::npos) << told[0];
  EXPECT_NE(told[0].find("recovery 1 of 1"), std::string::npos) << told[0];
  EXPECT_NE(ex.worker_pids()[2], victim);
}

// Recoveries are bounded: the failure after the last one ends the run as without recovery.
TEST(Recovery, FailureBeyondMaxRestartsEndsTheRun) {
  const Chain c;
  const auto o = controlled(2e-4, control::Estimator::kExMD, 1e-5);
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), recovering_options(1));
  try {
    run_traced(c.sys, ex, o, [&](std::size_t step) {
      if (step == 5 || step == 12) kill(ex.worker_pids()[0], SIGKILL);
    });
    FAIL() << "the second failure was recovered from too";
  } catch (const executors::WorkerFailure& e) {
    EXPECT_EQ(ex.recoveries(), 1u);
    EXPECT_EQ(e.subsystem(), 0u);
    EXPECT_GE(e.macro_step(), 12u);
  }
}

// The child processes of this test that are not in `known` (the workers a recovery started).
std::vector<pid_t> new_children(const std::vector<pid_t>& known) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    const pid_t pid = std::stoi(name);
    if (parent == getpid() && std::find(known.begin(), known.end(), pid) == known.end()) {
      found.push_back(pid);
    }
  }
  return found;
}

// Every recovery that was started is told, also one that fails while its new workers catch up
// (here every new worker is killed as soon as it appears), and the failure that ends the run is
// named at the run's own macro step and time, not at a replayed step's.
TEST(Recovery, FailedRecoveriesAreToldAndNamedAtTheRunsTime) {
  const Chain c;
  const auto o = controlled(2e-4, control::Estimator::kExMD, 1e-5);
  auto po = recovering_options(2);
  std::vector<std::string> told;
  po.on_recovery = [&told](const std::string& what) { told.push_back(what); };
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const std::vector<pid_t> first = ex.worker_pids();
  std::atomic<bool> hunting{false}, done{false};
  std::thread hunter([&] {
    while (!done) {
      if (hunting) {
        for (const pid_t pid : new_children(first)) kill(pid, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  double accepted = -1.0;
  try {
    run_traced(c.sys, ex, o, [&](std::size_t step) {
      accepted = ex.accepted_time();
      if (step == 5) {
        hunting = true;
        kill(first[1], SIGKILL);
      }
    });
    ADD_FAILURE() << "the run survived its replacements being killed";
  } catch (const executors::WorkerFailure& e) {
    EXPECT_EQ(e.time(), accepted) << e.what();
    EXPECT_NE(std::string(e.what()).find("during recovery 2 of 2"), std::string::npos) << e.what();
  }
  done = true;
  hunter.join();
  ASSERT_EQ(told.size(), 2u);
  EXPECT_NE(told[0].find("recovery 1 of 2 failed"), std::string::npos) << told[0];
  EXPECT_NE(told[1].find("recovery 2 of 2 failed"), std::string::npos) << told[1];
}

// The recovery files live in a private directory that the executor removes. $TMPDIR points to
// a directory of this test alone while it runs: other tests' runs with restarts, in parallel
// under ctest -j, make recovery directories in the shared one.
TEST(Recovery, RecoveryNeedsRollbackAndLeavesNoFiles) {
  const Chain c;
  auto po = recovering_options(1);
  po.rollback = false;
  EXPECT_THROW(executors::ProcessExecutor(c.sys, c.models, c.sys.initial_couplings(), po),
               std::invalid_argument);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  std::string own = (std::filesystem::temp_directory_path() / "recovery-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(own.data()), nullptr);
  ::setenv("TMPDIR", own.c_str(), 1);
  const auto count_dirs = [&own] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(own)) {
      n += e.path().filename().string().rfind("macrostep-recovery-", 0) == 0;
    }
    return n;
  };
  {
    executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(),
                                  recovering_options(1));
    EXPECT_EQ(count_dirs(), 1u);
    run_traced(c.sys, ex, controlled(2e-5, control::Estimator::kExMD, 1e-5));
  }
  EXPECT_EQ(count_dirs(), 0u);
  if (old_tmpdir != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  std::filesystem::remove_all(own);
}

}  // namespace
}  // namespace macrostep
