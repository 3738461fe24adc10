// The explicit scheme with the continuous and seed-003 approximations (SchemeOptions::
// approximations; METHODS.md §2.4, §2.5): every macro step of the runtime (IDA subsystems, the
// support points the worker evaluates, the rates kept beside the history) equals one step of the
// stability analysis's exact recurrence (runtime/analysis) from the same history — so the
// analysis and the runtime share one approximation, and the rates reach the subsystems.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "../support/two_mass_analysis.hpp"
#include "macrostep/analysis/stability.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

struct Point {
  double t;
  double u;
  std::vector<double> z;  // x1, v1, x2, v2
};

analysis::TwoMass approximations_two_mass() {
  return testing::linear_two_mass_for_analysis();
}

std::vector<Point> run(const polynomials::Approximation& a, int order, double h, int steps) {
  const auto sys = system::make_chain_system(testing::linear_two_mass(), {0, 1, 2});
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = h * steps;
  o.control.h = h;
  o.control.kappa_fixed = order;
  o.control.estimator = control::Estimator::kNone;
  o.control.fixed_start_ramp = false;
  o.approximations.assign(sys.coupling_count(), a);
  executors::InProcessOptions io;
  io.solver = testing::reference_solver();
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
  std::vector<Point> points;
  schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint& p) {
    // Outputs [x_first, x_last, v_first, v_last]; one body per subsystem.
    points.push_back(
        {p.time, p.u[0], {p.outputs[0][0], p.outputs[0][2], p.outputs[1][0], p.outputs[1][2]}});
  });
  return points;
}

// X_N of the recurrence from the runtime's accepted points (u̇ = c_c (v2 − v1), undamped).
std::vector<double> state(const analysis::Recurrence& r, const std::vector<Point>& pts,
                          std::size_t n) {
  std::vector<double> x(r.m.rows(), 0.0);
  std::copy(pts[n].z.begin(), pts[n].z.end(), x.begin());
  for (std::size_t j = 0; j < r.points; ++j) {
    x[4 + j] = pts[n - j].u;
    if (r.rates) x[4 + r.points + j] = 5e3 * (pts[n - j].z[3] - pts[n - j].z[1]);
  }
  return x;
}

TEST(ExplicitApproximations, EveryStepIsTheExactRecurrenceStep) {
  const double h = 2e-3;  // ω̂ = 0.2
  struct Case {
    const char* name;
    int order;
  };
  for (const Case c : {Case{"lagrange", 2}, Case{"c0", 2}, Case{"c1", 3}, Case{"const-2-3-opt", 0},
                       Case{"lin-2-3-opt", 0}, Case{"lin-2-2-opt", 0}, Case{"const-2-2-b0", 0}}) {
    analysis::Method method;
    method.approximation = polynomials::parse_approximation(c.name);
    method.order = c.order;
    const analysis::Recurrence r = analysis::recurrence(approximations_two_mass(), method, h);
    const auto pts = run(method.approximation, c.order, h, 40);
    ASSERT_EQ(pts.size(), 41u) << c.name;
    double worst = 0.0, scale = 0.0;
    for (std::size_t n = 8; n + 1 < pts.size(); ++n) {
      const auto x = state(r, pts, n);
      for (std::size_t i = 0; i < 4; ++i) {
        double next = 0.0;
        for (std::size_t j = 0; j < x.size(); ++j) next += r.m(i, j) * x[j];
        worst = std::max(worst, std::abs(next - pts[n + 1].z[i]) / (i % 2 == 0 ? 1.0 : 100.0));
        scale = std::max(scale, std::abs(pts[n + 1].z[i]) / (i % 2 == 0 ? 1.0 : 100.0));
      }
    }
    EXPECT_LT(worst, 1e-8 * scale) << c.name;  // IDA at rtol 1e-12 against exact integration
  }
}

// Without rates from the coupling law (a damped element) a set with b ≠ 0 is refused at start.
TEST(ExplicitApproximations, RatesOfADampedCouplingAreRefused) {
  auto p = testing::linear_two_mass();
  p.element[1].d = 10.0;
  const auto sys = system::make_chain_system(p, {0, 1, 2});
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = 1e-2;
  o.control.h = 1e-3;
  o.control.estimator = control::Estimator::kNone;
  o.approximations.assign(1, polynomials::parse_approximation("lin-2-3-opt"));
  executors::InProcessOptions io;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
  EXPECT_THROW(schemes::run_explicit(sys, ex, o, [](const schemes::AcceptedPoint&) {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
