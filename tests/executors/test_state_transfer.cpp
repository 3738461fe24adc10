// Exportable state across processes (DESIGN.md contract 2, exact rollback; METHODS.md
// §4.7): a subsystem's accepted workspace exported by one worker process and imported by a newly
// started one continues bit-identically, and a file written by a worker process is read by the
// in-process executor and the other way round. The reference is a run that was never
// interrupted, driven with the same polynomials.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/same_bits.hpp"
#include "../support/test_chain.hpp"

namespace macrostep {
namespace {

using macrostep::testing::same_bits;

struct TransferFixture {
  library::ChainParameters params = testing::test_chain(24, 23);

  std::vector<std::size_t> boundaries = library::equal_partition(24, 3);
  system::CoupledSystem system = system::make_chain_system(params, boundaries);
  std::vector<double> u0 = system.initial_couplings();
  std::vector<library::ModelDescription> models = library::chain_segment_descriptions(
      std::make_shared<const library::ChainParameters>(params), boundaries);

  std::unique_ptr<executors::ProcessExecutor> processes() const {
    executors::ProcessOptions po;
    po.solver = testing::tight_solver();
    po.executable = MACROSTEP_BINARY;
    return std::make_unique<executors::ProcessExecutor>(system, models, u0, po);
  }
  std::unique_ptr<executors::InProcessExecutor> in_process() const {
    executors::InProcessOptions io;
    io.solver = testing::tight_solver();
    io.threads = 1;
    return std::make_unique<executors::InProcessExecutor>(system, u0, io);
  }
};

// Explicit Jacobi steps of fixed size driven by hand; `between(n)` runs after accepted step n.
// Returns every nominal output and accepted state from step `record_from` on.
std::vector<std::vector<double>> drive(const TransferFixture& s, executors::Executor& ex, int steps,
                                       int record_from,
                                       const std::function<void(int)>& between = {}) {
  constexpr double kH = 2e-6;
  const std::size_t ns = s.system.subsystem_count();
  polynomials::CouplingHistory hist(s.system.coupling_count());
  hist.push(0.0, s.u0);
  std::vector<double> u_pre(s.system.coupling_count()), u(u_pre.size());
  std::vector<std::vector<double>> trace;
  for (int n = 0; n < steps; ++n) {
    const double t1 = kH * (n + 1);
    const int kappa = std::min(2, static_cast<int>(hist.size()) - 1);
    polynomials::lagrange_prediction(hist, kappa, t1, u_pre);
    std::vector<executors::SubsystemCommand> commands(ns);
    for (std::size_t i = 0; i < ns; ++i) {
      const auto in = s.system.feed_channels(i);
      const std::vector<std::size_t> sel(in.begin(), in.end());
      commands[i].nominal = polynomials::step_polynomial(hist, kappa, t1, u_pre, sel);
    }
    executors::PassOutcome out;
    ex.step(t1, commands, out);
    EXPECT_TRUE(out.ok) << out.error;
    std::vector<std::vector<double>> y(ns);
    for (std::size_t i = 0; i < ns; ++i) y[i] = out.subsystems[i].nominal.outputs;
    s.system.evaluate_couplings(y, u);
    ex.accept();
    hist.push(t1, u);
    if (n >= record_from) {
      for (const auto& yi : y) trace.push_back(yi);
      for (std::size_t i = 0; i < ns; ++i) {
        std::vector<double> z(s.system.subsystem(i).state_size());
        ex.accepted_state(i, z);
        trace.push_back(z);
      }
    }
    if (between) between(n);
  }
  return trace;
}

std::filesystem::path state_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("macrostep-test-state-" + std::to_string(getpid()) + "-" + name);
}

constexpr int kTransferSteps = 14;
constexpr int kCut = 6;  // the state of accepted step kCut is exported

// A worker process exports subsystem 2's T_N; later that worker is replaced by a new process
// (restart_worker: it starts at T_0), which imports the file and continues: bit-identical to a
// run whose worker lived throughout.
TEST(StateTransfer, ANewWorkerProcessContinuesFromAnExportedWorkspace) {
  const TransferFixture s;
  const auto file = state_file("worker.snapshot");
  auto reference = s.processes();
  const auto expected = drive(s, *reference, kTransferSteps, kCut + 1, [&](int n) {
    if (n == kCut) {
      EXPECT_GT(reference->export_state(1, file), 1000u);
    }
  });
  auto resumed = s.processes();
  const pid_t old_pid = resumed->worker_pids()[1];
  const auto got = drive(s, *resumed, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    resumed->restart_worker(1);  // a fresh process at T_0 ...
    EXPECT_EQ(resumed->accepted_time(), 2e-6 * (kCut + 1));
    resumed->import_state(1, file);  // ... takes over T_N from the file
  });
  EXPECT_NE(resumed->worker_pids()[1], old_pid);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(same_bits(expected, got));
  std::filesystem::remove(file);
}

// Groups (ProcessOptions::groups): a process hosting all three subsystems exports their states
// at step kCut and is replaced whole by restart_worker (every subsystem of it at T_0), which
// imports them; another grouping reads the same files. Both continue bit-identically to the
// in-process run (the files belong to the subsystems, not to the processes).
TEST(StateTransfer, GroupProcessesAreReplacedWholeAndReadEachOthersFiles) {
  const TransferFixture s;
  const auto expected = drive(s, *s.in_process(), kTransferSteps, kCut + 1);
  const auto grouped = [&](std::vector<std::vector<std::size_t>> groups) {
    executors::ProcessOptions po;
    po.solver = testing::tight_solver();
    po.executable = MACROSTEP_BINARY;
    po.groups = std::move(groups);
    return std::make_unique<executors::ProcessExecutor>(s.system, s.models, s.u0, po);
  };
  const auto file = [](std::size_t i) { return state_file("group-" + std::to_string(i)); };
  auto one = grouped({{0, 1, 2}});
  const pid_t old_pid = one->worker_pids()[0];
  EXPECT_EQ(one->worker_pids()[2], old_pid);
  const auto got = drive(s, *one, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    for (std::size_t i = 0; i < 3; ++i) EXPECT_GT(one->export_state(i, file(i)), 1000u);
    one->restart_worker(1);  // the process of all three
    for (std::size_t i = 0; i < 3; ++i) one->import_state(i, file(i));
  });
  EXPECT_NE(one->worker_pids()[0], old_pid);
  EXPECT_EQ(one->worker_pids()[0], one->worker_pids()[2]);
  EXPECT_TRUE(same_bits(expected, got));
  auto two = grouped({{0}, {1, 2}});
  const auto other = drive(s, *two, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    for (std::size_t i = 0; i < 3; ++i) two->import_state(i, file(i));
  });
  EXPECT_TRUE(same_bits(expected, other));
  for (std::size_t i = 0; i < 3; ++i) std::filesystem::remove(file(i));
}

std::vector<char> bytes_of(const std::filesystem::path& p) {
  std::vector<char> out(std::filesystem::file_size(p));
  std::FILE* f = std::fopen(p.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return {};
  EXPECT_EQ(std::fread(out.data(), 1, out.size(), f), out.size());
  std::fclose(f);
  return out;
}

// The file belongs to the subsystem, not to the executor: a worker process and the in-process
// executor write the same bytes for the same state, and each continues from the other's files
// bit-identically to a run that was never interrupted.
TEST(StateTransfer, InProcessAndWorkerProcessesReadEachOthersFiles) {
  const TransferFixture s;
  const std::size_t ns = s.system.subsystem_count();
  const auto file = [](const char* who, std::size_t i) {
    return state_file(std::string(who) + "-" + std::to_string(i));
  };
  auto reference = s.in_process();
  const auto expected = drive(s, *reference, kTransferSteps, kCut + 1);
  auto workers = s.processes();
  auto master = s.in_process();
  // Both export at kCut; the in-process executor, second, then imports the workers' files.
  const auto got_workers = drive(s, *workers, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    for (std::size_t i = 0; i < ns; ++i) workers->export_state(i, file("workers", i));
  });
  const auto got_master = drive(s, *master, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    for (std::size_t i = 0; i < ns; ++i) master->export_state(i, file("master", i));
    for (std::size_t i = 0; i < ns; ++i) master->import_state(i, file("workers", i));
  });
  for (std::size_t i = 0; i < ns; ++i) {
    EXPECT_EQ(bytes_of(file("workers", i)), bytes_of(file("master", i))) << "subsystem " << i;
  }
  // A fresh process executor at T_0 continues from the in-process executor's files.
  auto fresh = s.processes();
  const auto got_fresh = drive(s, *fresh, kTransferSteps, kCut + 1, [&](int n) {
    if (n != kCut) return;
    for (std::size_t i = 0; i < ns; ++i) {
      fresh->restart_worker(i);
      fresh->import_state(i, file("master", i));
    }
  });
  EXPECT_TRUE(same_bits(expected, got_workers));
  EXPECT_TRUE(same_bits(expected, got_master));
  EXPECT_TRUE(same_bits(expected, got_fresh));
  for (std::size_t i = 0; i < ns; ++i) {
    std::filesystem::remove(file("workers", i));
    std::filesystem::remove(file("master", i));
  }
}

// Bad files are refused with the path and the reason, and the worker keeps its state.
TEST(StateTransfer, AMissingOrForeignFileIsRefusedAndChangesNothing) {
  const TransferFixture s;
  auto ex = s.processes();
  const auto missing = state_file("does-not-exist");
  try {
    ex->import_state(0, missing);
    FAIL() << "imported a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
  // Subsystem 1 (one input) and subsystem 2 (two inputs, other masses): not interchangeable.
  const auto foreign = state_file("foreign");
  ex->export_state(1, foreign);
  EXPECT_THROW(ex->import_state(0, foreign), std::runtime_error);
  std::filesystem::remove(foreign);
  // The executor still runs, bit-identically to one that never saw the bad files.
  auto reference = s.processes();
  EXPECT_TRUE(same_bits(drive(s, *reference, 4, 0), drive(s, *ex, 4, 0)));
}

}  // namespace
}  // namespace macrostep
