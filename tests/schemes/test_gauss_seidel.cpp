// Gauss–Seidel in the runtime (METHODS.md §3.2, D-10; seed 001 Eq. 13/17; seed 000 App. C):
// every macro step of the runtime (IDA subsystems run in sequence, the second interpolating the
// first's new outputs) equals one step of the stability analysis's exact Gauss–Seidel recurrence
// (runtime/analysis, written independently from the matrix exponential) from the same history;
// and on the two-mass model Gauss–Seidel stays bounded at a step size where Jacobi grows, as the
// analysis predicts (seed 000 Figs. C.3/C.4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "../support/two_mass_analysis.hpp"
#include "macrostep/analysis/stability.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/schemes/gauss_seidel.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

struct SweepPoint {
  double u;
  std::vector<double> z;  // x1, v1, x2, v2
};

// Force/force: the middle spring in the master.
analysis::TwoMass gauss_seidel_two_mass() {
  return testing::linear_two_mass_for_analysis();
}

schemes::SchemeOptions fixed_options(
    int order, double h, int steps, bool gauss_seidel,
    schemes::GaussSeidelEndValue end_value = schemes::GaussSeidelEndValue::kConverged) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = h * steps;
  o.control.h = h;
  o.control.kappa_fixed = order;
  o.control.estimator = control::Estimator::kNone;
  o.control.fixed_start_ramp = false;
  if (gauss_seidel) {
    o.gauss_seidel.emplace();
    o.gauss_seidel->tolerance = 1e-9;  // the analysis takes the converged value
    o.gauss_seidel->end_value = end_value;
  }
  return o;
}

std::vector<SweepPoint> run(const schemes::SchemeOptions& o,
                            schemes::SchemeResult* result = nullptr,
                            const library::ChainParameters& chain = testing::linear_two_mass()) {
  const auto sys = system::make_chain_system(chain, {0, 1, 2});
  executors::InProcessOptions io;
  io.solver = testing::reference_solver();
  io.rollback = schemes::needs_rollback(o);
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
  std::vector<SweepPoint> points;
  const auto scheme = schemes::make_scheme(o);
  schemes::SchemeResult r;
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        points.push_back(
            {p.u[0], {p.outputs[0][0], p.outputs[0][2], p.outputs[1][0], p.outputs[1][2]}});
      },
      {}, r);
  if (result != nullptr) *result = r;
  return points;
}

// The largest deviation of a runtime step from the exact recurrence step taken from the same
// history (after 8 steps of start-up), positions in m and velocities in units of 100 m/s;
// `scale` receives the largest state in the same units.
double worst_recurrence_deviation(const analysis::Recurrence& r, const std::vector<SweepPoint>& pts,
                                  double& scale) {
  double worst = 0.0;
  scale = 0.0;
  for (std::size_t n = 8; n + 1 < pts.size(); ++n) {
    std::vector<double> x(r.m.rows(), 0.0);
    std::copy(pts[n].z.begin(), pts[n].z.end(), x.begin());
    for (std::size_t j = 0; j < r.points; ++j) x[4 + j] = pts[n - j].u;
    for (std::size_t j = 1; j <= r.state_points; ++j) {  // the sequential end value's past states
      std::copy(pts[n - j].z.begin(), pts[n - j].z.end(), x.begin() + 4 + r.points + 4 * (j - 1));
    }
    for (std::size_t i = 0; i < 4; ++i) {
      double next = 0.0;
      for (std::size_t j = 0; j < x.size(); ++j) next += r.m(i, j) * x[j];
      const double unit = i % 2 == 0 ? 1.0 : 100.0;
      worst = std::max(worst, std::abs(next - pts[n + 1].z[i]) / unit);
      scale = std::max(scale, std::abs(pts[n + 1].z[i]) / unit);
    }
  }
  return worst;
}

TEST(GaussSeidel, EveryStepIsTheExactRecurrenceStep) {
  const double h = 2e-3;  // ω̂ = 0.2
  for (int order = 0; order <= 3; ++order) {
    analysis::Method method;
    method.scheme = analysis::Scheme::kGaussSeidel;
    method.order = order;
    const analysis::Recurrence r = analysis::recurrence(gauss_seidel_two_mass(), method, h);
    schemes::SchemeResult result;
    const auto pts = run(fixed_options(order, h, 40, true), &result);
    ASSERT_EQ(pts.size(), 41u) << order;
    // Force/force: the second subsystem's force reads its own end state, so it is repeated
    // until the value settles (more than one pass beyond the Jacobi one).
    EXPECT_GT(result.corrector.passes, 40u) << order;
    EXPECT_EQ(result.steps.corrector_failures, 0u) << order;
    double scale = 0.0;
    const double worst = worst_recurrence_deviation(r, pts, scale);
    EXPECT_LT(worst, 1e-8 * scale) << "kappa " << order;  // IDA at rtol 1e-12 vs exact
    // And Gauss–Seidel is not Jacobi: the same steps differ from the Jacobi recurrence.
    analysis::Method jacobi = method;
    jacobi.scheme = analysis::Scheme::kJacobi;
    const analysis::Recurrence rj = analysis::recurrence(gauss_seidel_two_mass(), jacobi, h);
    std::vector<double> x(rj.m.rows(), 0.0);
    std::copy(pts[20].z.begin(), pts[20].z.end(), x.begin());
    for (std::size_t j = 0; j < rj.points; ++j) x[4 + j] = pts[20 - j].u;
    double diff = 0.0;
    for (std::size_t i = 0; i < 4; ++i) {
      double next = 0.0;
      for (std::size_t j = 0; j < x.size(); ++j) next += rj.m(i, j) * x[j];
      diff = std::max(diff, std::abs(next - pts[21].z[i]) / (i % 2 == 0 ? 1.0 : 100.0));
    }
    EXPECT_GT(diff, 1e3 * worst) << "kappa " << order;
  }
}

// The sequential end value (seed 000 App. C; GaussSeidelEndValue::kSequential): the force the
// second subsystem interpolates through is φ of the first's new outputs and its own outputs
// extrapolated from its accepted ones. Every runtime step is the analysis's sequential step
// (which differs from the converged one by far more than the runtime's deviation), and each
// step makes exactly one pass after the Jacobi one: nothing is repeated.
TEST(GaussSeidel, SequentialEndValueIsTheExactSequentialRecurrenceStep) {
  const double h = 2e-3;  // ω̂ = 0.2
  for (int order = 0; order <= 3; ++order) {
    SCOPED_TRACE("kappa " + std::to_string(order));
    analysis::Method method;
    method.scheme = analysis::Scheme::kGaussSeidel;
    method.end_value = analysis::GaussSeidelEndValue::kSequential;
    method.order = order;
    const analysis::Recurrence r = analysis::recurrence(gauss_seidel_two_mass(), method, h);
    schemes::SchemeResult result;
    const auto pts =
        run(fixed_options(order, h, 40, true, schemes::GaussSeidelEndValue::kSequential), &result);
    ASSERT_EQ(pts.size(), 41u);
    EXPECT_EQ(result.corrector.passes, 40u);
    EXPECT_EQ(result.steps.corrector_failures, 0u);
    double scale = 0.0;
    const double worst = worst_recurrence_deviation(r, pts, scale);
    EXPECT_LT(worst, 1e-8 * scale);  // IDA at rtol 1e-12 vs exact
    method.end_value = analysis::GaussSeidelEndValue::kConverged;
    double unused = 0.0;
    const double converged = worst_recurrence_deviation(
        analysis::recurrence(gauss_seidel_two_mass(), method, h), pts, unused);
    EXPECT_GT(converged, 1e3 * worst);
  }
  // With the continuous approximations (the first subsystem extrapolates with C0 or C1, the
  // own outputs still extrapolate with Lagrange of degree k) the same holds.
  for (const char* name : {"c0", "c1"}) {
    for (int order = 1; order <= 2; ++order) {
      SCOPED_TRACE(std::string(name) + " k = " + std::to_string(order));
      analysis::Method method;
      method.scheme = analysis::Scheme::kGaussSeidel;
      method.end_value = analysis::GaussSeidelEndValue::kSequential;
      method.order = order;
      method.approximation = polynomials::parse_approximation(name);
      auto o = fixed_options(order, h, 40, true, schemes::GaussSeidelEndValue::kSequential);
      o.approximations.assign(1, method.approximation);
      const auto pts = run(o);
      ASSERT_EQ(pts.size(), 41u);
      double scale = 0.0;
      const double worst = worst_recurrence_deviation(
          analysis::recurrence(gauss_seidel_two_mass(), method, h), pts, scale);
      EXPECT_LT(worst, 1e-8 * scale);
    }
  }
}

// Seed 000 App. C (METHODS §7.3 S3): on the symmetric undamped model (m = 1 kg, c = 1e4 N/m in
// every element) F/F Gauss–Seidel with κ = 0 is unstable as the seed defines it (sequential) and
// stable converged; with κ = 2 the sequential scheme is stable. At ω̂ = 0.3 the model runs until
// the analysis's ρ^N reaches 100: the κ = 0 sequential run grows at the analysis's rate ρ per
// step (measured between the first and the last 40 steps, within 10 % of ln ρ), the converged
// run and the κ = 2 sequential run stay bounded.
TEST(GaussSeidel, SequentialRunsGrowAndStayBoundedAsTheAnalysisSays) {
  library::ChainParameters chain = testing::linear_two_mass();
  chain.mass = {1.0, 1.0};
  for (auto& e : chain.element) e.c = 1e4;
  analysis::TwoMass model;
  model.c1 = model.cc = model.c2 = 1e4;
  const double h = 0.3 / model.omega1();
  const auto rho = [&](int order, analysis::GaussSeidelEndValue e) {
    analysis::Method m;
    m.scheme = analysis::Scheme::kGaussSeidel;
    m.end_value = e;
    m.order = order;
    return analysis::spectral_radius(model, m, h);
  };
  const double rho_seq0 = rho(0, analysis::GaussSeidelEndValue::kSequential);
  ASSERT_GT(rho_seq0, 1.01);
  ASSERT_LE(rho(0, analysis::GaussSeidelEndValue::kConverged), 1.0 + analysis::kStabilityTolerance);
  ASSERT_LE(rho(2, analysis::GaussSeidelEndValue::kSequential),
            1.0 + analysis::kStabilityTolerance);
  const int window = 40;  // more than a period of either mode (ω̂ ≤ 0.3·1.8 per step)
  const int steps = static_cast<int>(std::ceil(std::log(100.0) / std::log(rho_seq0))) + window;
  // ln(last window's largest |x1| + |x2| / first window's) per step between the windows.
  const auto growth = [&](int order, schemes::GaussSeidelEndValue e) {
    const auto pts = run(fixed_options(order, h, steps, true, e), nullptr, chain);
    double first = 0.0, last = 0.0;
    for (std::size_t n = 0; n < pts.size(); ++n) {
      const double a = std::abs(pts[n].z[0]) + std::abs(pts[n].z[2]);
      if (n < static_cast<std::size_t>(window)) first = std::max(first, a);
      if (n + window >= pts.size()) last = std::max(last, a);
    }
    return std::log(last / first) / static_cast<double>(pts.size() - window);
  };
  const double seq0 = growth(0, schemes::GaussSeidelEndValue::kSequential);
  EXPECT_NEAR(seq0, std::log(rho_seq0), 0.1 * std::log(rho_seq0));
  std::cout << "sequential kappa 0: growth per step " << std::exp(seq0) << ", analysis " << rho_seq0
            << " (" << steps << " steps)\n";
  const double bound = std::log(3.0) / static_cast<double>(steps);
  EXPECT_LT(growth(0, schemes::GaussSeidelEndValue::kConverged), bound);
  EXPECT_LT(growth(2, schemes::GaussSeidelEndValue::kSequential), bound);
}

// Seed 001 §2 (Fig. 1, Eq. 12-14): Gauss–Seidel with the continuous approximations. The first
// subsystem extrapolates with C0 or C1 of order k, the second interpolates the first's new
// outputs (Eq. 13); every runtime step equals the analysis's exact recurrence step of the same
// method, and C0/C1 differ from the Lagrange scheme (they are other methods, not relabelled ones).
TEST(GaussSeidel, ContinuousApproximationsFollowTheExactRecurrence) {
  const double h = 2e-3;
  for (const char* name : {"c0", "c1"}) {
    for (int order = 0; order <= 3; ++order) {
      SCOPED_TRACE(std::string(name) + " k = " + std::to_string(order));
      analysis::Method method;
      method.scheme = analysis::Scheme::kGaussSeidel;
      method.order = order;
      method.approximation = polynomials::parse_approximation(name);
      const analysis::Recurrence r = analysis::recurrence(gauss_seidel_two_mass(), method, h);
      auto o = fixed_options(order, h, 40, true);
      o.approximations.assign(1, method.approximation);
      schemes::SchemeResult result;
      const auto pts = run(o, &result);
      ASSERT_EQ(pts.size(), 41u);
      EXPECT_EQ(result.steps.corrector_failures, 0u);
      double scale = 0.0;
      const double worst = worst_recurrence_deviation(r, pts, scale);
      EXPECT_LT(worst, 1e-8 * scale);
      // Not the Lagrange scheme under another name (for k = 0, C1 and Lagrange still differ: a
      // smoothstep from u_{N-1} to u_N against the constant u_N).
      const auto lagrange = run(fixed_options(order, h, 40, true));
      double diff = 0.0;
      for (std::size_t n = 0; n < pts.size(); ++n) {
        diff = std::max(diff, std::abs(lagrange[n].z[0] - pts[n].z[0]));
      }
      EXPECT_GT(diff, 1e3 * worst);
    }
  }
}

// Seed 000 App. C (Figs. C.3/C.4): Gauss–Seidel is more stable than Jacobi. The step size is
// taken from the analysis (the first H on a grid where Jacobi's ρ > 1.02 and Gauss–Seidel's ρ = 1),
// then both schemes run until ρ_Jacobi^N = 10 (and 20 steps more): Jacobi grows, Gauss–Seidel
// stays bounded.
TEST(GaussSeidel, StableWhereJacobiGrowsAsTheAnalysisPredicts) {
  const int order = 3;  // the analysis: Jacobi stable to ω̂ 0.97, Gauss–Seidel to 1.05
  analysis::Method gs, jac;
  gs.scheme = analysis::Scheme::kGaussSeidel;
  gs.order = jac.order = order;
  double h = 0.0, rho_jacobi = 0.0;
  for (double w = 0.05; w < 2.0; w += 0.005) {
    const double step = w / std::sqrt(1e4);
    const double rj = analysis::spectral_radius(gauss_seidel_two_mass(), jac, step);
    if (rj > 1.02 && analysis::spectral_radius(gauss_seidel_two_mass(), gs, step) <=
                         1.0 + analysis::kStabilityTolerance) {
      h = step;
      rho_jacobi = rj;
      break;
    }
  }
  ASSERT_GT(h, 0.0) << "the analysis finds no step size where only Jacobi is unstable";
  const int steps = static_cast<int>(std::ceil(std::log(10.0) / std::log(rho_jacobi))) + 20;
  const auto amplitude = [&](bool gauss_seidel) {
    const auto pts = run(fixed_options(order, h, steps, gauss_seidel));
    double first = 0.0, last = 0.0;
    for (std::size_t n = 0; n < pts.size(); ++n) {
      const double a = std::abs(pts[n].z[0]) + std::abs(pts[n].z[2]);
      (n < 20 ? first : last) = std::max(n < 20 ? first : last, a);
    }
    return last / first;
  };
  EXPECT_GT(amplitude(false), 5.0) << "Jacobi at H = " << h;
  EXPECT_LT(amplitude(true), 3.0) << "Gauss-Seidel at H = " << h;  // undamped: ρ = 1
}

// The repetitions' default tolerance converges Gauss–Seidel to well within the coupling
// tolerance: on the two-mass model and on a chain of 10 masses in 5 subsystems (Gauss–Seidel's
// later subsystems each repeated), every output at every accepted point of a run with the
// default tolerance differs from the run converged to 1e-9 of the weights (to the subsystems'
// rtol 1e-10) by less than 1e-2·rtol of the output's largest magnitude; every step converged, and
// the residual left is within the tolerance. (Measured: two-mass 2.1e-8 of the scale with 1.83
// repetitions per step, ten masses 2.1e-7 with 6.18; the earlier rule — the last change within
// 1e-3 of the weights w = atol_u + rtol·|u|, atol_u = 1 N — left 1.2e-6 and 4.3e-6 with 1 and 4.)
TEST(GaussSeidel, DefaultToleranceConvergesWellWithinTheCouplingTolerance) {
  struct Case {
    library::ChainParameters chain;
    std::vector<std::size_t> cuts;
    double h;
  };
  library::ChainParameters ten = testing::linear_two_mass();
  ten.mass.assign(10, 1.0);
  ten.element.assign(11, {1e4, 0.5, 0, 0, 3, 3});
  ten.forces.resize(10);
  ten.x0.assign(10, 0.0);
  ten.v0.assign(10, 0.0);
  ten.x0[0] = 1e-3;
  ten.v0[5] = 0.1;
  for (const Case& c :
       {Case{testing::linear_two_mass(), {0, 1, 2}, 1e-3}, Case{ten, {0, 2, 4, 6, 8, 10}, 5e-4}}) {
    const auto sys = system::make_chain_system(c.chain, c.cuts);
    ida::IntegratorOptions solver = testing::tight_solver();
    solver.rtol = 1e-10;
    solver.atol_pos = 1e-13;
    solver.atol_vel = 1e-10;
    const auto outputs = [&](double tolerance, schemes::SchemeResult& r) {
      schemes::SchemeOptions o = fixed_options(2, c.h, 400, true);
      o.gauss_seidel->tolerance = tolerance;
      executors::InProcessOptions io;
      io.solver = solver;
      executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
      std::vector<std::vector<double>> y;
      schemes::run_scheme(
          sys, ex, *schemes::make_scheme(o), o,
          [&](const schemes::AcceptedPoint& p) {
            y.emplace_back();
            for (const auto& out : p.outputs)
              y.back().insert(y.back().end(), out.begin(), out.end());
          },
          {}, r);
      return y;
    };
    schemes::SchemeResult by_default, tight;
    const double tolerance = schemes::GaussSeidelOptions{}.tolerance;
    const auto a = outputs(tolerance, by_default);
    const auto b = outputs(1e-9, tight);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(by_default.steps.corrector_failures, 0u) << sys.subsystem_count();
    EXPECT_LE(by_default.corrector.max_iteration_residual, tolerance);
    EXPECT_GT(by_default.corrector.passes, by_default.corrector.attempts);  // it repeats
    std::vector<double> scale(a.front().size(), 0.0);
    for (const auto& row : b)
      for (std::size_t k = 0; k < row.size(); ++k) scale[k] = std::max(scale[k], std::abs(row[k]));
    double worst = 0.0;
    for (std::size_t n = 0; n < a.size(); ++n)
      for (std::size_t k = 0; k < a[n].size(); ++k)
        worst = std::max(worst, std::abs(a[n][k] - b[n][k]) / scale[k]);
    const double rtol = schemes::SchemeOptions{}.control.tolerances.rtol;
    EXPECT_LT(worst, 1e-2 * rtol) << sys.subsystem_count() << " subsystems";
    std::cout << sys.subsystem_count() << " subsystems: default vs converged " << worst
              << " of the scale, " << by_default.corrector.mean_passes()
              << " repetitions per step\n";
  }
}

TEST(GaussSeidel, OptionsOutsideItsScopeAreRefused) {
  const auto expect_refused = [](schemes::SchemeOptions o) {
    EXPECT_THROW(run(o), std::invalid_argument);
  };
  auto o = fixed_options(1, 1e-3, 5, true);
  o.control.mode = control::StepSizeMode::kVariable;  // D-10: fixed H only
  o.control.estimator = control::Estimator::kExCV;
  expect_refused(o);
  o = fixed_options(1, 1e-3, 5, true);
  o.control.estimator = control::Estimator::kExMD;  // comparison runs are Jacobi's
  expect_refused(o);
  o = fixed_options(1, 1e-3, 5, true);
  o.gauss_seidel->sequence = {0, 0};
  expect_refused(o);
  o.gauss_seidel->sequence = {1};
  expect_refused(o);
  o = fixed_options(1, 1e-3, 5, true);
  o.approximations.assign(1, polynomials::parse_approximation("const-2-4"));  // needs rates
  expect_refused(o);
  // Reversed, the other subsystem interpolates: a different scheme with the same exCV monitor.
  o = fixed_options(1, 1e-3, 20, true);
  o.gauss_seidel->sequence = {1, 0};
  const auto reversed = run(o);
  const auto forward = run(fixed_options(1, 1e-3, 20, true));
  ASSERT_EQ(reversed.size(), forward.size());
  EXPECT_NE(reversed.back().z[0], forward.back().z[0]);
}

}  // namespace
}  // namespace macrostep
