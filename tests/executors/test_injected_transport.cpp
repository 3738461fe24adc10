// ProcessExecutor behind another transport than the rings: its workers are threads of this
// process serving commands with the worker's own command handler (thread_workers.hpp). The
// executor is given the transport and the supervisor through its two interfaces only, so these
// tests show that the seam is real: the call-order suite passes, and a controlled run with extra
// runs, rejects and output evaluations is bit-identical to the in-process reference
// (DESIGN.md contract 1).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "../support/same_bits.hpp"
#include "call_order_suite.hpp"
#include "explicit_options.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "thread_workers.hpp"

namespace macrostep::testing {
namespace {

using macrostep::testing::same_bits;

std::unique_ptr<executors::ProcessExecutor> threaded_executor(
    const system::CoupledSystem& system, std::span<const library::ModelDescription> models,
    std::span<const double> u0, const executors::ProcessOptions& options) {
  const auto specs = executors::worker_specs(system, models, u0);
  return std::make_unique<executors::ProcessExecutor>(thread_workers(specs, options).parts, specs,
                                                      system.subsystem(0).initial_time(), options);
}

struct ThreadWorkersFactory {
  static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
                                                   const executors::ExecutorOptions& options) {
    executors::ProcessOptions po;
    static_cast<executors::ExecutorOptions&>(po) = options;
    return threaded_executor(s.system, s.models, s.u0, po);
  }
};

// The accepted points of a controlled explicit run (exMD: a comparison run per subsystem and
// rejected steps), every subsystem's accepted state at each.
std::vector<std::vector<double>> accepted_points(const system::CoupledSystem& sys,
                                                 executors::Executor& ex,
                                                 const schemes::SchemeOptions& o) {
  std::vector<std::vector<double>> points;
  const auto scheme = schemes::make_scheme(o);
  schemes::SchemeResult result;
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        std::vector<double> all{p.time};
        all.insert(all.end(), p.u.begin(), p.u.end());
        for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
          std::vector<double> z(sys.subsystem(i).state_size());
          ex.accepted_state(i, z);
          all.insert(all.end(), z.begin(), z.end());
        }
        points.push_back(std::move(all));
      },
      {}, result);
  EXPECT_GT(result.steps.accepted, 5u);
  return points;
}

TEST(InjectedTransport, ThreadWorkersAreBitIdenticalToInProcess) {
  CallOrderSystem s;
  // Comparison runs (exMD) and a tolerance tight enough for rejected steps.
  const schemes::SchemeOptions o = controlled(0.05, control::Estimator::kExMD, 1e-6);
  executors::InProcessOptions io;
  io.rollback = true;
  executors::InProcessExecutor reference(s.system, s.u0, io);
  executors::ProcessOptions po;
  static_cast<executors::ExecutorOptions&>(po) = io;
  po.extra_runs = 1;
  const auto threaded = threaded_executor(s.system, s.models, s.u0, po);
  const auto a = accepted_points(s.system, reference, o);
  const auto b = accepted_points(s.system, *threaded, o);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_TRUE(same_bits(a[k], b[k])) << "accepted point " << k;
  }
  for (std::size_t i = 0; i < s.system.subsystem_count(); ++i) {
    EXPECT_EQ(reference.total_stats(i).residual_evals, threaded->total_stats(i).residual_evals);
  }
  EXPECT_EQ(threaded->segment_name(), "threads of the test process");
}

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(CallOrderThreadWorkers, CallOrder, ThreadWorkersFactory);

}  // namespace macrostep::testing
