// Explicit Jacobi co-simulation (METHODS.md §3.1, §6.4; seed 000 §2.4.1, §3) with the
// in-process executor: agreement with the monolithic solution, executor determinism
// (contract 1), error handling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/test_chain.hpp"
#include "explicit_options.hpp"
#include "star_system.hpp"
#include "verification_support.hpp"

namespace macrostep {
namespace {

// A nonlinear 20-mass chain, 2-4 subsystems (K-5.3-like scales, shorter).
library::ChainParameters test_chain(std::size_t n = 20) {
  return testing::test_chain(n, 11);
}

struct CosimRun {
  std::vector<double> times;
  std::vector<std::vector<double>> u;  // coupling variables per accepted point
  std::vector<std::vector<double>> y;  // all outputs concatenated per accepted point
  schemes::SchemeResult result;
};

CosimRun run(const system::CoupledSystem& sys, const schemes::SchemeOptions& o, int threads,
             double rtol_ida = 1e-8) {
  executors::InProcessOptions eo;
  eo.solver.rtol = rtol_ida;
  eo.solver.atol_pos = 1e-3 * rtol_ida;
  eo.solver.atol_vel = rtol_ida;
  eo.rollback = schemes::needs_rollback(o);
  eo.threads = threads;
  const auto u0 = sys.initial_couplings();
  executors::InProcessExecutor ex(sys, u0, eo);
  CosimRun r;
  r.result = schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint& p) {
    r.times.push_back(p.time);
    r.u.emplace_back(p.u.begin(), p.u.end());
    std::vector<double> all;
    for (const auto& y : p.outputs) all.insert(all.end(), y.begin(), y.end());
    r.y.push_back(all);
  });
  return r;
}

using testing::controlled;

// Coupling-body positions of a co-simulation against a tight monolithic run at the same
// macro points; relative to the largest displacement.
double position_error(const library::ChainParameters& p, const system::CoupledSystem& sys,
                      const CosimRun& r) {
  library::ChainSegment whole(p, 0, p.size());
  ida::IntegratorOptions io;
  io.rtol = 1e-10;
  io.atol_pos = 1e-13;
  io.atol_vel = 1e-10;
  ida::Integrator ref(whole, io);
  std::vector<double> z(whole.state_size()), zp(z.size());
  double err = 0.0, scale = 0.0;
  for (std::size_t k = 1; k < r.times.size(); ++k) {
    ref.advance_to(r.times[k]);
    ref.state(z, zp);
    std::size_t offset_sub[8] = {};
    for (std::size_t i = 1; i < sys.subsystem_count(); ++i) {
      offset_sub[i] = offset_sub[i - 1] + sys.subsystem(i - 1).output_size();
    }
    for (const auto& m : sys.monitored_outputs()) {
      if (m.group != control::WeightGroup::kPosition) continue;
      const double x = r.y[k][offset_sub[m.output.subsystem] + m.output.output];
      const std::size_t i = verification::chain_state_index(m);
      err = std::max(err, std::abs(x - z[i]));
      scale = std::max(scale, std::abs(z[i]));
    }
  }
  return err / scale;
}

// A controlled exMD run follows the monolithic solution to about its tolerance
// (seed 000 §5.2: the estimators track the coupling error).
TEST(ExplicitJacobi, ControlledRunFollowsMonolithicSolution) {
  const auto p = test_chain();
  const auto sys = system::make_chain_system(p, library::equal_partition(p.size(), 2));
  for (auto e : {control::Estimator::kExMD, control::Estimator::kExLE, control::Estimator::kExCV}) {
    const CosimRun r = run(sys, controlled(2e-3, e, 1e-4), 1);
    EXPECT_GT(r.result.steps.accepted, 20u) << control::to_string(e);
    const double err = position_error(p, sys, r);
    EXPECT_LT(err, 2e-3) << control::to_string(e);
    // Tightening the tolerance makes the error smaller (the controller is in charge).
    const CosimRun tight = run(sys, controlled(2e-3, e, 1e-6), 1);
    EXPECT_LT(position_error(p, sys, tight), err) << control::to_string(e);
    EXPECT_GT(tight.result.steps.accepted, r.result.steps.accepted);
  }
}

// Contract 1: the in-process executor gives bit-identical results sequentially and with
// parallel runs (nominal and comparison runs as concurrent TBB tasks).
TEST(ExplicitJacobi, SequentialAndParallelExecutorsAreBitIdentical) {
  const auto p = test_chain();
  const auto sys = system::make_chain_system(p, library::equal_partition(p.size(), 4));
  const auto o = controlled(1e-3, control::Estimator::kExMD, 1e-5);
  const CosimRun a = run(sys, o, 1);
  const CosimRun b = run(sys, o, 2);
  ASSERT_EQ(a.times.size(), b.times.size());
  EXPECT_EQ(std::memcmp(a.times.data(), b.times.data(), a.times.size() * sizeof(double)), 0);
  for (std::size_t k = 0; k < a.u.size(); ++k) {
    ASSERT_EQ(a.u[k], b.u[k]) << "macro point " << k;
    ASSERT_EQ(a.y[k], b.y[k]) << "macro point " << k;
  }
  EXPECT_EQ(a.result.steps.rejected, b.result.steps.rejected);
}

// Fixed H (exH) without rollback: the grid is T_0 + k H after the Listing 5.1 ramp.
TEST(ExplicitJacobi, FixedStepRunsOnItsGrid) {
  const auto p = test_chain();
  const auto sys = system::make_chain_system(p, library::equal_partition(p.size(), 2));
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = 1e-3;
  o.control.h = 1e-5;
  o.control.kappa_fixed = 2;
  o.control.estimator = control::Estimator::kNone;
  EXPECT_FALSE(schemes::needs_rollback(o));
  const CosimRun r = run(sys, o, 1);
  EXPECT_EQ(r.result.steps.rejected, 0u);
  EXPECT_DOUBLE_EQ(r.times.back(), 1e-3);
  // After the ramp (T >= 2H) consecutive points are H apart.
  for (std::size_t k = 1; k < r.times.size(); ++k) {
    if (r.times[k - 1] >= 2e-5 - 1e-18) {
      EXPECT_NEAR(r.times[k] - r.times[k - 1], 1e-5, 1e-17);
    }
  }
  EXPECT_LT(position_error(p, sys, r), 5e-3);
}

// METHODS §1.1, §3.1: the scheme runs any coupled system, here three bodies joined by one law
// that reads all three subsystems (not a chain). The controlled run follows the exact solution
// (tests/system/star_system.hpp), and the node's zero net force keeps the total momentum up to
// the subsystems' integration error (the step polynomials are linear in u, so their sum stays
// zero up to rounding).
TEST(ExplicitJacobi, RunsASystemThatIsNotAChain) {
  const testing::Star star;
  const auto sys = testing::make_star_system(star);
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kVariable;
  o.control.t_end = 1.0;
  o.control.h = 1e-4;
  o.control.estimator = control::Estimator::kExMD;
  o.control.tolerances = control::ErrorTolerances::for_rtol(1e-6);
  const CosimRun r = run(sys, o, 1, 1e-12);
  EXPECT_GT(r.result.steps.accepted, 20u);
  EXPECT_DOUBLE_EQ(r.times.back(), 1.0);
  const double momentum0 = star.mass * (star.v0[0] + star.v0[1] + star.v0[2]);
  double err = 0.0, drift = 0.0;
  for (std::size_t k = 0; k < r.times.size(); ++k) {
    const auto& y = r.y[k];  // [x_1, v_1, x_2, v_2, x_3, v_3]
    for (std::size_t i = 0; i < 3; ++i) {
      const auto exact = testing::star_exact(star, i, r.times[k]);
      err = std::max(err, std::abs(y[2 * i] - exact[0]));
    }
    drift = std::max(drift, std::abs(star.mass * (y[1] + y[3] + y[5]) - momentum0));
  }
  std::printf("[star] max position error %.3e m, momentum drift %.3e kg m/s, %llu steps\n", err,
              drift, static_cast<unsigned long long>(r.result.steps.accepted));
  EXPECT_LT(err, 5e-6);    // rtol 1e-6 on amplitudes of about 0.1 m
  EXPECT_LT(drift, 1e-9);  // the subsystems' integration error (rtol_IDA 1e-12)
}

TEST(ExplicitJacobi, RejectsNonsenseCombinations) {
  const auto p = test_chain();
  const auto sys = system::make_chain_system(p, library::equal_partition(p.size(), 2));
  const auto single = system::make_chain_system(p, {0, p.size()});
  executors::InProcessOptions eo;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
  auto noop = [](const schemes::AcceptedPoint&) {};
  auto o = controlled(1e-4, control::Estimator::kNone, 1e-4);
  EXPECT_THROW(schemes::run_explicit(sys, ex, o, noop), std::invalid_argument);
  o = controlled(1e-4, control::Estimator::kImMD, 1e-4);
  EXPECT_THROW(schemes::run_explicit(sys, ex, o, noop), std::invalid_argument);
  executors::InProcessExecutor ex1(single, single.initial_couplings(), eo);
  o = controlled(1e-4, control::Estimator::kExMD, 1e-4);
  EXPECT_THROW(schemes::run_explicit(single, ex1, o, noop), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
