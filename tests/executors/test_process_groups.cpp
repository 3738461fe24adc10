// Worker processes that host groups of subsystems (ProcessOptions::groups,
// placement::process_groups): bit-identical to the in-process reference and to one process per
// subsystem (DESIGN.md contract 1) for several groupings, even and uneven, with the runs in
// parallel on the group's arena and one after the other; a killed group process fails all of its
// subsystems, named together, and crash recovery replaces it whole (contract 5).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
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

#include "../support/test_chain.hpp"
#include "explicit_options.hpp"

namespace macrostep::process_groups_test {
namespace {

using Groups = std::vector<std::vector<std::size_t>>;

struct GroupChain {
  explicit GroupChain(std::size_t masses, std::size_t subsystems)
      : p(testing::test_chain(masses)),
        boundaries(library::equal_partition(p.size(), subsystems)),
        sys(system::make_chain_system(p, boundaries)),
        models(library::chain_segment_descriptions(
            std::make_shared<const library::ChainParameters>(p), boundaries)) {}
  library::ChainParameters p;
  std::vector<std::size_t> boundaries;
  system::CoupledSystem sys;
  std::vector<library::ModelDescription> models;
};

// Per accepted macro point: time, coupling variables, outputs and accepted states.
struct GroupTrace {
  std::vector<double> values;
  std::size_t points = 0;
  schemes::SchemeResult result;
  std::vector<ida::AdvanceStats> totals;
};

GroupTrace trace_run(const GroupChain& c, executors::Executor& ex,
                     const schemes::SchemeOptions& o) {
  GroupTrace t;
  const auto scheme = schemes::make_scheme(o);
  schemes::run_scheme(
      c.sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        t.values.push_back(p.time);
        t.values.insert(t.values.end(), p.u.begin(), p.u.end());
        for (const auto& y : p.outputs) t.values.insert(t.values.end(), y.begin(), y.end());
        for (std::size_t i = 0; i < c.sys.subsystem_count(); ++i) {
          std::vector<double> z(c.sys.subsystem(i).state_size());
          ex.accepted_state(i, z);
          t.values.insert(t.values.end(), z.begin(), z.end());
        }
        ++t.points;
      },
      {}, t.result);
  for (std::size_t i = 0; i < c.sys.subsystem_count(); ++i) t.totals.push_back(ex.total_stats(i));
  return t;
}

GroupTrace in_process_run(const GroupChain& c, const schemes::SchemeOptions& o) {
  executors::InProcessOptions io;
  io.solver = testing::tight_solver();
  io.rollback = true;
  executors::InProcessExecutor ex(c.sys, c.sys.initial_couplings(), io);
  return trace_run(c, ex, o);
}

executors::ProcessOptions grouped_options(const Groups& groups, int threads = 0) {
  executors::ProcessOptions po;
  po.solver = testing::tight_solver();
  po.rollback = true;
  po.executable = MACROSTEP_BINARY;
  po.groups = groups;
  po.threads = threads;
  po.extra_runs = 2;
  return po;
}

void expect_same(const GroupTrace& a, const GroupTrace& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.points, b.points);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)), 0);
  EXPECT_EQ(a.result.steps.accepted, b.result.steps.accepted);
  EXPECT_EQ(a.result.steps.rejected, b.result.steps.rejected);
  for (std::size_t i = 0; i < a.totals.size(); ++i) {
    EXPECT_EQ(a.totals[i].steps, b.totals[i].steps) << "subsystem " << i + 1;
    EXPECT_EQ(a.totals[i].residual_evals, b.totals[i].residual_evals) << "subsystem " << i + 1;
  }
}

std::string describe(const Groups& groups) {
  std::string s;
  for (const auto& g : groups) {
    s += "{";
    for (std::size_t i : g) s += std::to_string(i + 1) + " ";
    s += "} ";
  }
  return s;
}

schemes::SchemeOptions implicit_fd() {
  auto o = testing::controlled(2e-4, control::Estimator::kImMD, 1e-5);
  corrector::CorrectorOptions corrector;
  corrector.iteration = corrector::IterationKind::kNewton;
  corrector.jacobian = corrector::jacobian_name(corrector::JacobianKind::kFiniteDifference);
  o.corrector = corrector;
  return o;
}

// exMD with rejections (comparison runs, rollbacks): one process per subsystem, all seven in
// one process, even and uneven contiguous groups and a scattered grouping, the group's runs in
// parallel on its arena (threads 0) and one after the other (threads 1).
TEST(ProcessGroups, ExplicitRunsAreBitIdenticalForEveryGrouping) {
  const GroupChain c(21, 7);
  auto o = testing::controlled(4e-4, control::Estimator::kExMD, 1e-5);
  o.control.step.safety = 1.0;  // rejections too
  const GroupTrace reference = in_process_run(c, o);
  ASSERT_GT(reference.points, 10u);
  ASSERT_GT(reference.result.steps.rejected, 0u);
  const std::vector<std::pair<Groups, int>> cases = {
      {{}, 0},
      {placement::process_groups(0, 7, 1), 0},
      {placement::process_groups(0, 7, 3), 0},  // 3, 2, 2
      {placement::process_groups(0, 7, 2), 1},  // 4, 3; one thread: in turn
      {{{0, 5}, {1, 2, 3}, {6}}, 0},            // subsystem 5 alone, not in a list
  };
  for (const auto& [groups, threads] : cases) {
    executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(),
                                  grouped_options(groups, threads));
    expect_same(reference, trace_run(c, ex, o),
                describe(groups) + "threads " + std::to_string(threads));
  }
}

// The implicit scheme (corrector passes, perturbed runs) with subsystem 1 in the master and the
// other five in two uneven groups.
TEST(ProcessGroups, ImplicitRunWithAHostedSubsystemIsBitIdentical) {
  const GroupChain c(18, 6);
  const auto o = implicit_fd();
  const GroupTrace reference = in_process_run(c, o);
  ASSERT_GT(reference.points, 5u);
  auto po = grouped_options(placement::process_groups(1, 5, 2));  // {2, 3, 4}, {5, 6}
  po.host_first_subsystem = true;
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const auto pids = ex.worker_pids();
  EXPECT_EQ(pids[1], pids[3]);
  EXPECT_EQ(pids[4], pids[5]);
  EXPECT_NE(pids[1], pids[4]);
  expect_same(reference, trace_run(c, ex, o), "hosted + groups");
}

// A killed group process fails all of its subsystems: the failure names every one of them.
TEST(ProcessGroups, KilledGroupWorkerIsReportedWithEverySubsystem) {
  const GroupChain c(20, 5);
  const auto o = testing::controlled(1.0, control::Estimator::kExMD, 1e-5);  // longer than the test
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(),
                                grouped_options({{0, 1}, {2, 3, 4}}));
  const pid_t victim = ex.worker_pids()[3];
  std::size_t accepted = 0;
  try {
    schemes::run_explicit(c.sys, ex, o, [&](const schemes::AcceptedPoint&) {
      if (++accepted == 4) kill(victim, SIGKILL);
    });
    FAIL() << "the run went on without subsystems 3-5";
  } catch (const executors::WorkerFailure& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.subsystem(), 2u);
    EXPECT_GE(e.macro_step(), 4u);
    EXPECT_NE(what.find("subsystems 3, 4, 5 (one worker process, pid " + std::to_string(victim)),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("signal 9"), std::string::npos) << what;
  }
}

// A stopped group process (SIGSTOP: alive, evaluating nothing) hangs: it is killed after the
// hang timeout and reported with all its subsystems.
TEST(ProcessGroups, HungGroupWorkerIsKilledAndNamedWithEverySubsystem) {
  const GroupChain c(20, 4);
  const auto o = testing::controlled(1.0, control::Estimator::kExMD, 1e-5);  // longer than the test
  auto po = grouped_options({{0, 1}, {2, 3}});
  po.hang_timeout = std::chrono::milliseconds(1000);
  po.poll_interval = std::chrono::milliseconds(50);
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  const pid_t victim = ex.worker_pids()[0];
  std::size_t accepted = 0;
  try {
    schemes::run_explicit(c.sys, ex, o, [&](const schemes::AcceptedPoint&) {
      if (++accepted == 5) kill(victim, SIGSTOP);
    });
    FAIL() << "the run went on without subsystems 1 and 2";
  } catch (const executors::WorkerFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("subsystems 1, 2 (one worker process"), std::string::npos) << what;
    EXPECT_NE(what.find("hangs"), std::string::npos) << what;
  }
}

// With crash recovery the group's process is replaced whole (its mates at the same accepted
// state), and the run is the same bits as the undisturbed one; twice, in different groups.
TEST(ProcessGroups, KilledGroupWorkerIsRecoveredBitIdentically) {
  const GroupChain c(20, 5);
  auto o = testing::controlled(6e-4, control::Estimator::kExMD, 1e-5);
  o.control.step.safety = 1.0;
  const GroupTrace reference = in_process_run(c, o);
  ASSERT_GT(reference.points, 20u);
  auto po = grouped_options({{0, 1}, {2, 3, 4}});
  po.max_restarts = 2;
  po.recovery_interval = std::chrono::milliseconds(0);
  std::vector<std::string> told;
  po.on_recovery = [&](const std::string& what) { told.push_back(what); };
  executors::ProcessExecutor ex(c.sys, c.models, c.sys.initial_couplings(), po);
  GroupTrace disturbed;
  {
    const auto scheme = schemes::make_scheme(o);
    std::size_t points = 0;
    schemes::run_scheme(
        c.sys, ex, *scheme, o,
        [&](const schemes::AcceptedPoint& p) {
          disturbed.values.push_back(p.time);
          disturbed.values.insert(disturbed.values.end(), p.u.begin(), p.u.end());
          for (const auto& y : p.outputs) {
            disturbed.values.insert(disturbed.values.end(), y.begin(), y.end());
          }
          for (std::size_t i = 0; i < c.sys.subsystem_count(); ++i) {
            std::vector<double> z(c.sys.subsystem(i).state_size());
            ex.accepted_state(i, z);
            disturbed.values.insert(disturbed.values.end(), z.begin(), z.end());
          }
          ++disturbed.points;
          if (++points == 5) kill(ex.worker_pids()[4], SIGKILL);
          if (points == 12) kill(ex.worker_pids()[0], SIGKILL);
        },
        {}, disturbed.result);
    for (std::size_t i = 0; i < c.sys.subsystem_count(); ++i) {
      disturbed.totals.push_back(ex.total_stats(i));
    }
  }
  EXPECT_EQ(ex.recoveries(), 2u);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_NE(told[0].find("subsystems 3, 4, 5 (one worker process"), std::string::npos) << told[0];
  EXPECT_NE(told[1].find("subsystems 1, 2 (one worker process"), std::string::npos) << told[1];
  expect_same(reference, disturbed, "two recoveries");
}

// Groups that repeat a subsystem, name one that does not exist, or take the hosted one are
// refused before anything starts.
TEST(ProcessGroups, BadGroupsAreRefused) {
  const GroupChain c(12, 3);
  const auto u0 = c.sys.initial_couplings();
  EXPECT_THROW(executors::ProcessExecutor(c.sys, c.models, u0, grouped_options({{0, 1}, {1, 2}})),
               std::invalid_argument);
  EXPECT_THROW(executors::ProcessExecutor(c.sys, c.models, u0, grouped_options({{0, 3}})),
               std::invalid_argument);
  auto hosted = grouped_options({{0, 1}});
  hosted.host_first_subsystem = true;
  EXPECT_THROW(executors::ProcessExecutor(c.sys, c.models, u0, hosted), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep::process_groups_test
