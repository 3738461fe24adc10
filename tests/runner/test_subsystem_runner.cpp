// SubsystemRunner (subsystems/runner): the one piece of code that runs a subsystem's nominal,
// comparison and perturbed runs, for the in-process executor and the worker process alike
// (DESIGN.md data flow, contract 1). Here: its own rules (call order, bad runs refused with a
// clear message) and that the runs' results do not depend on scheduling. The executors' tests
// check it end to end (tests/executors/test_passes.cpp).
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/runner/subsystem_runner.hpp"

#include "../support/test_chain.hpp"

namespace macrostep {
namespace {

using runner::ExtraRun;
using runner::SubsystemRunner;

// Degree-1 inputs over [t0, t1] for the segment's two inputs.
model::SupportPoints line(double t0, double t1, double a, double b) {
  model::SupportPoints p{};
  p.degree = 1;
  p.channels = 2;
  p.step_begin = t0;
  p.time = {t0, t1};
  p.value[0] = {a, a + 1.0};
  p.value[1] = {b, b - 2.0};
  return p;
}

runner::RunnerOptions options() {
  runner::RunnerOptions o;
  o.solver = testing::tight_solver();
  return o;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

TEST(SubsystemRunner, BadRunsAreRefusedWithTheReason) {
  const auto params = testing::test_chain(12, 3);
  const library::ChainSegment segment(params, 4, 8);  // two inputs
  SubsystemRunner r(segment, std::vector<double>{0.5, -0.5}, options());
  auto nominal = line(0.0, 1e-5, 0.5, -0.5);
  auto one_channel = nominal;
  one_channel.channels = 1;
  EXPECT_NE(message_of([&] { r.prepare(1e-5, one_channel, {}); }).find("1 channels for 2 inputs"),
            std::string::npos);
  const std::vector<ExtraRun> bad_perturbed{ExtraRun::perturbed(2, 1.0)};
  EXPECT_NE(message_of([&] {
              r.prepare(1e-5, nominal, bad_perturbed);
            }).find("perturbed run of input 2 of a subsystem with 2 inputs"),
            std::string::npos);
  const std::vector<ExtraRun> bad_comparison{ExtraRun::comparison(one_channel)};
  EXPECT_NE(message_of([&] {
              r.prepare(1e-5, nominal, bad_comparison);
            }).find("comparison polynomial with 1 channels"),
            std::string::npos);
  EXPECT_THROW(r.accept(), std::logic_error);  // nothing to accept yet
  EXPECT_THROW(SubsystemRunner(segment, std::vector<double>{0.5}, options()),
               std::invalid_argument);
}

TEST(SubsystemRunner, CallOrderBetweenPasses) {
  const auto params = testing::test_chain(12, 3);
  const library::ChainSegment segment(params, 4, 8);
  SubsystemRunner r(segment, std::vector<double>{0.5, -0.5}, options());
  std::vector<double> z(segment.state_size());
  r.prepare(1e-5, line(0.0, 1e-5, 0.5, -0.5), {});
  r.run_all(nullptr);
  EXPECT_EQ(r.failure(), "");
  EXPECT_THROW(r.accepted_state(z), std::logic_error);  // during a step
  EXPECT_EQ(r.time(), 1e-5);
  EXPECT_EQ(r.accepted_time(), 0.0);
  r.reject();
  EXPECT_EQ(r.time(), 0.0);
  r.prepare(2e-5, line(0.0, 2e-5, 0.5, -0.5), {});
  r.run_all(nullptr);
  r.accept();
  EXPECT_EQ(r.accepted_time(), 2e-5);
  r.accepted_state(z);

  // A failed run is named with its index, the others still report.
  const std::vector<ExtraRun> extra{ExtraRun::perturbed(0, 1.0)};
  r.prepare(1e-5, line(2e-5, 1e-5, 0.5, -0.5), extra);  // ends before T_N
  r.run_all(nullptr);
  EXPECT_EQ(r.failed_run(), 0u);
  EXPECT_NE(r.failure().find("nominal run: "), std::string::npos);
  r.reject();

  // Without rollback: one pass per step, no extra runs, no reject.
  auto no_rollback = options();
  no_rollback.rollback = false;
  SubsystemRunner plain(segment, std::vector<double>{0.5, -0.5}, no_rollback);
  EXPECT_THROW(plain.prepare(1e-5, line(0.0, 1e-5, 0.5, -0.5), extra), std::logic_error);
  plain.prepare(1e-5, line(0.0, 1e-5, 0.5, -0.5), {});
  plain.run_all(nullptr);
  EXPECT_THROW(plain.prepare(1e-5, line(0.0, 1e-5, 0.5, -0.5), {}), std::logic_error);
  EXPECT_THROW(plain.reject(), std::logic_error);
  plain.accept();
}

// Contract 1: the runs of a pass give the same bits whether they run one after the other or as
// tasks of an arena.
TEST(SubsystemRunner, RunsAreBitIdenticalSerialAndOnAnArena) {
  const auto params = testing::test_chain(12, 3);
  const library::ChainSegment segment(params, 4, 8);
  SubsystemRunner serial(segment, std::vector<double>{0.5, -0.5}, options());
  SubsystemRunner parallel(segment, std::vector<double>{0.5, -0.5}, options());
  tbb::task_arena arena(2);
  double t = 0.0;
  for (int n = 0; n < 5; ++n) {
    const double t1 = t + 1e-5;
    const auto nominal = line(t, t1, 0.5 + n, -0.5 * n);
    std::vector<ExtraRun> extra{ExtraRun::perturbed(0, 2.0 + n), ExtraRun::perturbed(1, -3.0),
                                ExtraRun::comparison(line(t, t1, 0.4, 0.1))};
    serial.prepare(t1, nominal, extra);
    parallel.prepare(t1, nominal, extra);
    serial.run_all(nullptr);
    parallel.run_all(&arena);
    ASSERT_EQ(serial.run_count(), 4u);
    for (std::size_t k = 0; k < serial.run_count(); ++k) {
      const auto& a = serial.result(k).outputs;
      const auto& b = parallel.result(k).outputs;
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << "run " << k;
    }
    // The perturbed runs moved the outputs; the nominal run did not see them.
    EXPECT_NE(serial.result(1).outputs, serial.result(0).outputs);
    serial.accept();
    parallel.accept();
    t = t1;
  }
  EXPECT_EQ(serial.total_stats().steps, parallel.total_stats().steps);
}

// The final checkpoint of a fixed-step run: a runner without rollback exports its
// accepted workspace too, the same bytes as a runner with rollback after the same passes, and a
// runner that imports them continues bit-identically (contract 2; METHODS §4.7).
TEST(SubsystemRunner, ExportWithoutRollbackEqualsExportWithIt) {
  const auto params = testing::test_chain(12, 3);
  const library::ChainSegment segment(params, 4, 8);
  auto no_rollback = options();
  no_rollback.rollback = false;
  SubsystemRunner plain(segment, std::vector<double>{0.5, -0.5}, no_rollback);
  SubsystemRunner snapshotting(segment, std::vector<double>{0.5, -0.5}, options());
  double t = 0.0;
  const auto pass = [&](SubsystemRunner& r, int n) {
    r.prepare(t + 1e-5, line(t, t + 1e-5, 0.5 + n, -0.5 * n), {});
    r.run_all(nullptr);
    r.accept();
  };
  for (int n = 0; n < 4; ++n, t += 1e-5) {
    pass(plain, n);
    pass(snapshotting, n);
  }
  const std::vector<std::byte> bytes = plain.export_state();
  EXPECT_EQ(bytes, snapshotting.export_state());

  SubsystemRunner imported(segment, std::vector<double>{0.5, -0.5}, options());
  imported.import_state(bytes);
  EXPECT_EQ(imported.accepted_time(), plain.accepted_time());
  pass(plain, 4);
  pass(imported, 4);
  std::vector<double> a(segment.state_size()), b(segment.state_size());
  plain.accepted_state(a);
  imported.accepted_state(b);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
  EXPECT_THROW(plain.import_state(bytes), std::logic_error);  // import needs rollback
}

}  // namespace
}  // namespace macrostep
