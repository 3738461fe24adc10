// Direct feed-through and the consistent update (METHODS.md §1.1 D-1, seed 000
// Eq. 2.22, §3.1.3, App. B; seed 001 §1, §4): the two-mass oscillator (METHODS §1.2) in
// force/displacement decomposition with the feed-through output of Eq. 2.7 (subsystem "two" holds
// the coupling element and outputs its force, which depends on its inputs x̃1, ṽ1 at once), and
// in displacement/displacement decomposition (Eq. 2.8) as the comparison.
//  - The coupling equations hold at every accepted macro point: λ = c_c(x2 − x̃1) + d_c(v2 − ṽ1)
//    with x̃1 = x1, ṽ1 = v1, from the observed outputs (an independent evaluation of Eq. 2.7).
//  - The monolithic baseline of the description (MonolithicSystem with the D terms) equals the
//    closed-form solution e^{A t} z0 of the linear oscillator (analysis::monolithic_matrix).
//  - Global order of explicit Jacobi with fixed H: κ+1 for F/D with the consistent update, as
//    for D/D (seed 000 App. B, METHODS §7.2 O4: the simplified update would drop F/D to κ; seed
//    001 §4: D/D has no drop), against the closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "force_displacement_model.hpp"
#include "macrostep/analysis/stability.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/monolithic_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "verification_support.hpp"

namespace {

using namespace macrostep;

// The shared F/D oscillator (force_displacement_model.hpp).
const char* const kFd = macrostep::testing::kForceDisplacementTwoMass;

constexpr const char* kDd = R"(
[[subsystem]]
name = "one"
model = "oscillator_mass"
mass = 1.0
c = 1.0e4
displacement_input = true
coupling_c = 5.0e3
coupling_d = 2.0
x0 = 1.0e-3

[[subsystem]]
name = "two"
model = "oscillator_mass"
mass = 1.0
c = 2.0e4
displacement_input = true
coupling_c = 5.0e3
coupling_d = 2.0

[[connection]]
name = "x1"
law = "displacement"
from = ["one.x", "one.v"]
to = {position = "two.x_in", velocity = "two.v_in"}

[[connection]]
name = "x2"
law = "displacement"
from = ["two.x", "two.v"]
to = {position = "one.x_in", velocity = "one.v_in"}
)";

constexpr const char* kFeedthroughRun = R"(
[simulation]
end_time = 0.05
output_interval = 1e-3
)";

constexpr double kFeedthroughEnd = 0.04;

system::CoupledSystem build(const char* text) {
  const config::RunConfig c =
      config::parse_config(std::string(text) + kFeedthroughRun, "feedthrough");
  EXPECT_TRUE(c.system_description.has_value());
  return system::build_system(*c.system_description);
}

ida::IntegratorOptions feedthrough_solver() {
  ida::IntegratorOptions o;
  o.rtol = 1e-11;
  o.atol_pos = 1e-15;
  o.atol_vel = 1e-12;
  return o;
}

// A fixed-H explicit Jacobi run with degree κ; `observe` sees every accepted point. Returns the
// largest state error at kFeedthroughEnd against the closed form, relative to the largest state.
// ramp: Listing 5.1's start-up (tiny first steps while the history fills), without which the
// first steps' lower degrees (κ_N = min(κ, N)) cost one order at κ = 2 in both decompositions.
// implicit: the Newton corrector with the FD interface Jacobian instead (METHODS §4.1-4.3).
double jacobi_error(const system::CoupledSystem& sys, double h, int kappa,
                    const schemes::AcceptedObserver& observe = {}, bool ramp = false,
                    bool implicit = false) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = kFeedthroughEnd;
  o.control.h = h;
  o.control.kappa_fixed = kappa;
  o.control.estimator = control::Estimator::kNone;
  o.control.fixed_start_ramp = ramp;
  if (implicit) {
    o.corrector = corrector::CorrectorOptions{};
    // Tight convergence weights: the corrector error stays below the coupling error measured.
    o.control.tolerances.rtol = 1e-9;
    o.control.tolerances.atol_pos = 1e-12;
    o.control.tolerances.atol_vel = 1e-9;
    o.control.tolerances.atol_u = 1e-9;
  }
  executors::InProcessOptions eo;
  eo.solver = feedthrough_solver();
  eo.rollback = schemes::needs_rollback(o);
  eo.threads = 1;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
  const auto scheme = schemes::make_scheme(o);
  schemes::SchemeResult result;
  double reached = 0.0;
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        reached = p.time;
        if (observe) observe(p);
      },
      [](const schemes::StepRecord&) {}, result);
  EXPECT_NEAR(reached, kFeedthroughEnd, 1e-12);
  const std::vector<double> z = verification::chain_state(sys, ex);  // [x1, v1, x2, v2]
  return macrostep::testing::relative_state_error(
      z, macrostep::testing::force_displacement_exact_state(kFeedthroughEnd));
}

TEST(Feedthrough, ConfigurationAcceptsItAndTheSubsystemDeclaresIt) {
  const system::CoupledSystem sys = build(kFd);
  EXPECT_TRUE(sys.has_feedthrough());
  EXPECT_TRUE(sys.subsystem(1).has_feedthrough());
  EXPECT_FALSE(sys.subsystem(0).has_feedthrough());
  // u0 = [x̃1, ṽ1, λ] consistent at t0: λ0 = c_c(x2 − x1) = −5.
  const std::vector<double> u0 = sys.initial_couplings();
  ASSERT_EQ(u0.size(), 3u);
  EXPECT_DOUBLE_EQ(u0[0], 1e-3);
  EXPECT_NEAR(u0[2], -5.0, 1e-12);
  // D/D: both masses have feed-through outputs, read by nothing: accepted, no loop.
  EXPECT_TRUE(build(kDd).subsystem(0).has_feedthrough());
}

// Seed 000 Eq. 2.22 / D-1: at every accepted macro point u − φ(y(u)) = 0 to 1e-3 of the
// coupling-variable weights (atol_u = 1, rtol 1e-4 by default), checked from the outputs: the
// element force that "two" reports equals λ, and x̃1, ṽ1 equal mass one's states.
TEST(Feedthrough, CouplingEquationsHoldAtEveryAcceptedMacroPoint) {
  const system::CoupledSystem sys = build(kFd);
  const control::ErrorTolerances tol;  // the run's coupling-variable weights
  std::size_t points = 0;
  double worst = 0.0;
  jacobi_error(sys, 2e-4, 2, [&](const schemes::AcceptedPoint& p) {
    const auto& one = p.outputs[0];
    const auto& two = p.outputs[1];
    const double x_tilde = p.u[0], v_tilde = p.u[1], lambda = p.u[2];
    const double force = 5e3 * (two[0] - one[0]) + 2.0 * (two[1] - one[1]);  // Eq. 2.7, c_c, d_c
    const double w = 1.0 / (tol.atol_u + tol.rtol * std::abs(lambda));
    worst = std::max(worst, std::abs(lambda - force) * w);
    EXPECT_EQ(x_tilde, one[0]) << p.time;
    EXPECT_EQ(v_tilde, one[1]) << p.time;
    EXPECT_NEAR(two[2], lambda, 1e-9 * std::max(1.0, std::abs(lambda))) << p.time;
    ++points;
  });
  EXPECT_GE(points, 201u);  // the initial point and 200 steps
  EXPECT_LE(points, 202u);
  EXPECT_LE(worst, 1e-3);
  std::printf("F/D feed-through: largest weighted coupling residual over %zu points: %.3g\n",
              points, worst);
}

// The monolithic baseline of a feed-through description (MonolithicSystem with −∂φ/∂y·D in the
// coupling rows) against the closed form.
TEST(Feedthrough, MonolithicBaselineMatchesTheClosedForm) {
  for (const char* text : {kFd, kDd}) {
    const system::CoupledSystem sys = build(text);
    const system::MonolithicSystem whole(sys);
    ida::Integrator integrator(whole, feedthrough_solver());
    integrator.advance_to(kFeedthroughEnd);
    std::vector<double> z(whole.state_size()), zp(z.size());
    integrator.state(z, zp);
    const std::array<double, 4> ref =
        macrostep::testing::force_displacement_exact_state(kFeedthroughEnd);
    double scale = 0.0;
    for (double r : ref) scale = std::max(scale, std::abs(r));
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(z[i], ref[i], 1e-8 * scale) << i;
  }
}

// Seed 000 App. B / METHODS §7.2 O4, seed 001 §4: fixed H, κ = 0, 1, 2: the global error of
// explicit Jacobi F/D with the consistent update falls as H^{κ+1}, like D/D's.
TEST(Feedthrough, JacobiForceDisplacementKeepsGlobalOrderKappaPlusOne) {
  const system::CoupledSystem fd = build(kFd), dd = build(kDd);
  for (int kappa = 0; kappa <= 2; ++kappa) {
    const std::vector<double> hs = {4e-4, 2e-4, 1e-4};
    std::vector<double> e_fd, e_dd;
    for (double h : hs) {
      e_fd.push_back(jacobi_error(fd, h, kappa, {}, true));
      e_dd.push_back(jacobi_error(dd, h, kappa, {}, true));
    }
    const double p_fd = verification::loglog_slope(hs, e_fd);
    const double p_dd = verification::loglog_slope(hs, e_dd);
    std::printf("kappa %d: F/D errors %.3e %.3e %.3e order %.2f; D/D %.3e %.3e %.3e order %.2f\n",
                kappa, e_fd[0], e_fd[1], e_fd[2], p_fd, e_dd[0], e_dd[1], e_dd[2], p_dd);
    EXPECT_NEAR(p_fd, kappa + 1, 0.3) << "F/D, kappa " << kappa;
    EXPECT_NEAR(p_dd, kappa + 1, 0.3) << "D/D, kappa " << kappa;
  }
}

// The implicit scheme takes feed-through without a separate update: its corrector iterates the
// end values s, every run (the FD Jacobian's perturbed runs too) evaluates its outputs with its
// own end inputs, so ∂y/∂u is in the interface Jacobian (METHODS §4.2). Checked: the coupling
// equation of Eq. 2.7 at every accepted point to the corrector's tolerance, and global order
// κ + 1 = 2 at κ = 1 against the closed form.
TEST(Feedthrough, ImplicitSchemeSolvesTheCouplingEquationsToo) {
  const system::CoupledSystem sys = build(kFd);
  double worst = 0.0;
  jacobi_error(
      sys, 2e-4, 1,
      [&](const schemes::AcceptedPoint& p) {
        const double force =
            5e3 * (p.outputs[1][0] - p.outputs[0][0]) + 2.0 * (p.outputs[1][1] - p.outputs[0][1]);
        worst = std::max(worst, std::abs(p.u[2] - force) / (1.0 + std::abs(force)));
      },
      false, true);
  EXPECT_LE(worst, 1e-6);
  const std::vector<double> hs = {4e-4, 2e-4, 1e-4};
  std::vector<double> e;
  for (double h : hs) e.push_back(jacobi_error(sys, h, 1, {}, true, true));
  const double p = verification::loglog_slope(hs, e);
  std::printf("implicit F/D kappa 1: errors %.3e %.3e %.3e order %.2f; residual %.3g\n", e[0], e[1],
              e[2], p, worst);
  EXPECT_NEAR(p, 2.0, 0.3);
}

}  // namespace
