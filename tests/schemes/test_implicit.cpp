// The iterative schemes (runtime/schemes/implicit.hpp; METHODS.md §4.1-4.6, §5.1; seed 000
// §2.4.2-2.4.3, §5.1; seed 002 §2.4):
//  - the converged implicit step of a linear two-mass oscillator equals the solution of the
//    coupled linear equations in closed form (and the semi-implicit step, one exact Newton step
//    for a linear problem, too: METHODS §4.4 note);
//  - converged steps satisfy the coupling equations g = u − φ(y) ≈ 0 (§4.1);
//  - implicit and waveform keep the explicit global order O(H^{κ+1}) (seed 000 §5.1);
//  - sap equals fd where sap is exact (free bodies, App. A) and runs no perturbed runs;
//  - K-5.5 (seed 000 §5.5): explicit crawls on a stiff damped coupling, implicit does not;
//  - K-5.1 (seed 000 §5.1, Fig. 5.4): the largest stable H at κ = 2 is ordered explicit <
//    waveform < implicit (1e-5 : 5e-5 : 2.5e-4 s);
//  - invalid combinations are refused with a message.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "../support/test_chain.hpp"
#include "explicit_options.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/control/error_norm.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"
#include "star_system.hpp"

namespace macrostep {
namespace {

corrector::CorrectorOptions newton() {
  return corrector::CorrectorOptions{};
}

// D-50: a converged Newton iteration ends with the pass of the integrated iterate.
corrector::CorrectorOptions without_final_pass() {
  corrector::CorrectorOptions o;
  o.final_pass = false;
  return o;
}

corrector::CorrectorOptions with_iteration(corrector::IterationKind k) {
  corrector::CorrectorOptions o;
  o.iteration = k;
  return o;
}

struct MacroPoint {
  double t;
  std::vector<double> u;
  std::vector<std::vector<double>> y;
};

std::vector<MacroPoint> run(const system::CoupledSystem& sys, const schemes::SchemeOptions& o,
                            const ida::IntegratorOptions& solver,
                            schemes::SchemeResult* result = nullptr, int threads = 0) {
  executors::InProcessOptions io;
  io.solver = solver;
  io.rollback = schemes::needs_rollback(o);
  io.threads = threads;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
  std::vector<MacroPoint> points;
  auto scheme = schemes::make_scheme(o);
  schemes::SchemeResult r;
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        points.push_back({p.time, {p.u.begin(), p.u.end()}, {p.outputs.begin(), p.outputs.end()}});
      },
      {}, r);
  if (result != nullptr) *result = r;
  return points;
}

schemes::SchemeOptions fixed(double t_end, double h, int kappa,
                             std::optional<corrector::CorrectorOptions> c) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = t_end;
  o.control.h = h;
  o.control.kappa_fixed = kappa;
  o.control.estimator = control::Estimator::kNone;
  o.control.fixed_start_ramp = false;
  o.control.tolerances = control::ErrorTolerances::for_rtol(1e-12);
  o.control.tolerances.atol_u = 1e-9;
  o.corrector = c;
  return o;
}

// x(h), v(h) of m x'' = −c x + f (f constant) from (x0, v0).
std::array<double, 2> oscillator(double m, double c, double f, double x0, double v0, double h) {
  const double w = std::sqrt(c / m), xs = f / c;
  return {xs + (x0 - xs) * std::cos(w * h) + v0 / w * std::sin(w * h),
          -(x0 - xs) * w * std::sin(w * h) + v0 * std::cos(w * h)};
}

// κ = 0 (constant λ over the step): body 1 m1 x'' = −c1 x + λ, body 2 m2 x'' = −λ − c3 x;
// x_i(H; λ) is affine in λ and λ = c_c (x2 − x1) is one linear equation per step. From every
// accepted point of the scheme the next λ is computed in closed form and compared.
void expect_closed_form_steps(const corrector::CorrectorOptions& c,
                              schemes::SchemeResult* result = nullptr) {
  const auto p = testing::linear_two_mass();
  const auto sys = system::make_chain_system(p, {0, 1, 2});
  const double h = 2e-3;
  const auto points = run(sys, fixed(0.1, h, 0, c), testing::reference_solver(), result);
  ASSERT_EQ(points.size(), 51u);
  double worst = 0.0;
  for (std::size_t n = 0; n + 1 < points.size(); ++n) {
    const auto& a = points[n];
    const double hn = points[n + 1].t - a.t;
    // Outputs [x_first, x_last, v_first, v_last]: one body per subsystem.
    const double x1 = a.y[0][0], v1 = a.y[0][2], x2 = a.y[1][0], v2 = a.y[1][2];
    const auto r1_0 = oscillator(1.0, 1e4, 0.0, x1, v1, hn),
               r1_1 = oscillator(1.0, 1e4, 1.0, x1, v1, hn);
    const auto r2_0 = oscillator(2.0, 2e4, 0.0, x2, v2, hn),
               r2_1 = oscillator(2.0, 2e4, -1.0, x2, v2, hn);
    const double a1 = r1_0[0], b1 = r1_1[0] - r1_0[0], a2 = r2_0[0], b2 = r2_1[0] - r2_0[0];
    const double lambda = 5e3 * (a2 - a1) / (1.0 - 5e3 * (b2 - b1));
    const double got = points[n + 1].u[0];
    worst = std::max(worst, std::abs(got - lambda) / std::max(1.0, std::abs(lambda)));
  }
  EXPECT_LT(worst, 1e-7) << corrector::iteration_name(c.iteration) << " " << c.jacobian
                         << " final_pass " << c.final_pass;
}

void expect_closed_form_steps(
    corrector::IterationKind kind,
    corrector::JacobianKind jacobian = corrector::JacobianKind::kFiniteDifference,
    schemes::SchemeResult* result = nullptr) {
  auto c = with_iteration(kind);
  c.jacobian = corrector::jacobian_name(jacobian);
  expect_closed_form_steps(c, result);
}

TEST(ImplicitScheme, ConvergedStepOfALinearTwoMassOscillatorIsTheClosedFormSolution) {
  expect_closed_form_steps(corrector::IterationKind::kNewton);
}

// D-50: the fd Newton step solves a linear coupling at once, so the second difference is rounding
// and the pass of s^1 is the result: the same closed-form solution, one pass per step fewer.
TEST(ImplicitScheme, IntegratedIterateEndsALinearStepWithoutTheFinalPass) {
  schemes::SchemeResult with, without;
  expect_closed_form_steps(newton(), &with);
  expect_closed_form_steps(without_final_pass(), &without);
  std::printf("[final pass] %.2f corrector passes per step with it, %.2f without\n",
              with.corrector.mean_passes(), without.corrector.mean_passes());
  EXPECT_LT(without.corrector.mean_passes(), with.corrector.mean_passes() - 0.5);
}

// Beyond the seeds: a Jacobian kept across passes and steps, IQN-ILS secant updates, and a kept
// J with Broyden updates converge to the same closed-form solution with far fewer Jacobians (fd
// only on the first step for quasi-Newton; broyden's updates carry its J across κ and H).
TEST(ImplicitScheme, ReuseQuasiNewtonAndBroydenConvergeToTheClosedFormWithFewerJacobians) {
  schemes::SchemeResult fd, reuse, qn, broyden;
  expect_closed_form_steps(corrector::IterationKind::kNewton,
                           corrector::JacobianKind::kFiniteDifference, &fd);
  expect_closed_form_steps(corrector::IterationKind::kNewton, corrector::JacobianKind::kReuse,
                           &reuse);
  expect_closed_form_steps(corrector::IterationKind::kNewton, corrector::JacobianKind::kQuasiNewton,
                           &qn);
  expect_closed_form_steps(corrector::IterationKind::kNewton, corrector::JacobianKind::kBroyden,
                           &broyden);
  std::printf("[jacobians] fd %llu, reuse %llu, quasi-newton %llu, broyden %llu over %llu steps\n",
              static_cast<unsigned long long>(fd.corrector.jacobian_evaluations),
              static_cast<unsigned long long>(reuse.corrector.jacobian_evaluations),
              static_cast<unsigned long long>(qn.corrector.jacobian_evaluations),
              static_cast<unsigned long long>(broyden.corrector.jacobian_evaluations),
              static_cast<unsigned long long>(fd.steps.accepted));
  EXPECT_LT(reuse.corrector.jacobian_evaluations, fd.corrector.jacobian_evaluations / 4);
  EXPECT_LE(qn.corrector.jacobian_evaluations, 2u);
  EXPECT_LT(qn.time.extra_runs_ns, fd.time.extra_runs_ns);
  EXPECT_LE(broyden.corrector.jacobian_evaluations, reuse.corrector.jacobian_evaluations);
}

// Seed 002 §2.4 / METHODS §4.4: for a linear problem the FD Jacobian is exact, so one Newton
// step converges and u_{N+1} = φ(y^c) is the same solution.
TEST(SemiImplicitScheme, OneNewtonStepSolvesALinearCouplingExactly) {
  expect_closed_form_steps(corrector::IterationKind::kSemiImplicit);
}

// max over the points of ‖u − φ(y)‖ with the W^u weights of `tol` (METHODS §4.3).
double worst_coupling_residual(const system::CoupledSystem& sys,
                               const std::vector<MacroPoint>& points,
                               const control::ErrorTolerances& tol) {
  std::vector<double> phi(sys.coupling_count());
  double worst = 0.0;
  for (const auto& pt : points) {
    sys.evaluate_couplings(pt.y, phi);
    worst =
        std::max(worst, control::scaled_difference_norm(pt.u, phi, 1.0, pt.u, tol,
                                                        control::WeightGroup::kCouplingVariable));
  }
  return worst;
}

// METHODS §4.1, §4.3: at every accepted point of a controlled imMD run the coupling equations
// hold to the convergence tolerance: ‖u − φ(y)‖ with the W^u weights stays below 1.
TEST(ImplicitScheme, AcceptedPointsSatisfyTheCouplingEquations) {
  const auto p = testing::test_chain(12);
  const auto sys = system::make_chain_system(p, library::equal_partition(12, 4));
  auto o = testing::controlled(2e-3, control::Estimator::kImMD, 1e-4);
  o.corrector = newton();
  schemes::SchemeResult r;
  const auto points = run(sys, o, testing::tight_solver(), &r);
  ASSERT_GT(points.size(), 20u);
  EXPECT_LT(worst_coupling_residual(sys, points, o.control.tolerances), 1.0);
  EXPECT_GT(r.corrector.passes, 0u);
  EXPECT_GE(r.corrector.mean_passes(), 1.0);
  EXPECT_LE(r.corrector.max_passes, 10u);
  EXPECT_GT(r.time.extra_runs_ns, 0);  // the perturbed runs
  std::printf("[implicit imMD] %llu accepted, %llu rejected, %.2f corrector passes per step\n",
              static_cast<unsigned long long>(r.steps.accepted),
              static_cast<unsigned long long>(r.steps.rejected), r.corrector.mean_passes());
}

// D-50 on a nonlinear chain under imMD control: ending with the pass of the integrated iterate
// keeps the run's error against a tight run (rtol 1e-7 with the final pass) within a factor 2 of
// the error with the final pass, and takes fewer corrector passes per attempt: with the fd
// Jacobian, and with broyden's kept one, whose Newton steps contract more slowly (R > 0).
TEST(ImplicitScheme, ControlledRunWithoutTheFinalPassKeepsItsError) {
  const auto p = testing::test_chain(12);
  const auto sys = system::make_chain_system(p, library::equal_partition(12, 4));
  const auto end_outputs = [&](double rtol, const corrector::CorrectorOptions& c,
                               schemes::SchemeResult& r) {
    auto o = testing::controlled(2e-3, control::Estimator::kImMD, rtol);
    o.corrector = c;
    return run(sys, o, testing::tight_solver(), &r).back().y;
  };
  schemes::SchemeResult ref_r;
  const auto ref = end_outputs(1e-7, newton(), ref_r);
  for (const char* jacobian : {"fd", "broyden"}) {
    auto with_c = newton(), without_c = without_final_pass();
    with_c.jacobian = without_c.jacobian = jacobian;
    schemes::SchemeResult with_r, without_r;
    const auto with = end_outputs(1e-4, with_c, with_r);
    const auto without = end_outputs(1e-4, without_c, without_r);
    double e_with = 0.0, e_without = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      for (std::size_t k = 0; k < ref[i].size(); ++k) {
        const double scale = std::max(1e-3, std::abs(ref[i][k]));
        e_with = std::max(e_with, std::abs(with[i][k] - ref[i][k]) / scale);
        e_without = std::max(e_without, std::abs(without[i][k] - ref[i][k]) / scale);
      }
    }
    std::printf(
        "[final pass, %s] error %.3e with, %.3e without; passes per attempt %.2f / %.2f; "
        "accepted %llu / %llu\n",
        jacobian, e_with, e_without, with_r.corrector.mean_passes(),
        without_r.corrector.mean_passes(), static_cast<unsigned long long>(with_r.steps.accepted),
        static_cast<unsigned long long>(without_r.steps.accepted));
    EXPECT_LT(e_without, 2.0 * e_with + 1e-9) << jacobian;
    EXPECT_LT(without_r.corrector.mean_passes(), with_r.corrector.mean_passes()) << jacobian;
  }
}

// Reuse across steps ("while the contraction rate stays below a threshold"): in a
// controlled run H changes at nearly every step, so a J kept only for an equal H would serve few
// steps. A J of the same κ and an H within reuse_step_ratio of its own serves the next ones, and
// the accepted points still satisfy the coupling equations (METHODS §4.3) as with fd.
TEST(ImplicitScheme, ReuseKeepsItsJacobianAcrossStepsOfANearStepSize) {
  const auto p = testing::test_chain(12);
  const auto sys = system::make_chain_system(p, library::equal_partition(12, 4));
  auto o = testing::controlled(2e-3, control::Estimator::kImMD, 1e-4);
  const auto reuse_run = [&](double ratio, schemes::SchemeResult& r) {
    auto c = newton();
    c.jacobian = "reuse";
    c.reuse_step_ratio = ratio;
    o.corrector = c;
    return run(sys, o, testing::tight_solver(), &r);
  };
  schemes::SchemeResult equal, near;
  reuse_run(1.0, equal);
  const auto points = reuse_run(2.0, near);
  std::printf(
      "[reuse] Jacobians %llu (equal H only) vs %llu (H within 2x) for %llu / %llu "
      "attempts\n",
      static_cast<unsigned long long>(equal.corrector.jacobian_evaluations),
      static_cast<unsigned long long>(near.corrector.jacobian_evaluations),
      static_cast<unsigned long long>(equal.steps.accepted + equal.steps.rejected),
      static_cast<unsigned long long>(near.steps.accepted + near.steps.rejected));
  EXPECT_LT(near.corrector.jacobian_evaluations, equal.corrector.jacobian_evaluations * 3 / 4);
  EXPECT_LT(near.corrector.jacobian_evaluations, near.steps.accepted / 2);
  EXPECT_LT(worst_coupling_residual(sys, points, o.control.tolerances), 1.0);
}

// Broyden updates carry a kept J across the controller's changes of κ and H (reuse refreshes it
// at each), so a controlled run makes a fraction of reuse's Jacobians; its accepted points still
// satisfy the coupling equations (METHODS §4.3), and its result stays within the controller's
// tolerance of the fd run's.
TEST(ImplicitScheme, BroydenKeepsItsJacobianAcrossKappaAndStepSize) {
  const auto p = testing::test_chain(12);
  const auto sys = system::make_chain_system(p, library::equal_partition(12, 4));
  auto o = testing::controlled(2e-3, control::Estimator::kImMD, 1e-4);
  const auto run_with = [&](const char* jacobian, schemes::SchemeResult& r) {
    auto c = newton();
    c.jacobian = jacobian;
    o.corrector = c;
    return run(sys, o, testing::tight_solver(), &r);
  };
  schemes::SchemeResult fd, reuse, broyden;
  const auto fd_points = run_with("fd", fd);
  run_with("reuse", reuse);
  const auto points = run_with("broyden", broyden);
  std::printf(
      "[broyden] Jacobians fd %llu, reuse %llu, broyden %llu; accepted %llu / %llu / %llu\n",
      static_cast<unsigned long long>(fd.corrector.jacobian_evaluations),
      static_cast<unsigned long long>(reuse.corrector.jacobian_evaluations),
      static_cast<unsigned long long>(broyden.corrector.jacobian_evaluations),
      static_cast<unsigned long long>(fd.steps.accepted),
      static_cast<unsigned long long>(reuse.steps.accepted),
      static_cast<unsigned long long>(broyden.steps.accepted));
  const auto per_step = [](const schemes::SchemeResult& r) {
    return static_cast<double>(r.integrations.nominal + r.integrations.extra) /
           static_cast<double>(r.steps.accepted);
  };
  std::printf(
      "[broyden] corrector passes per attempt %.3f / %.3f / %.3f; integrations per step "
      "%.3f / %.3f / %.3f\n",
      fd.corrector.mean_passes(), reuse.corrector.mean_passes(), broyden.corrector.mean_passes(),
      per_step(fd), per_step(reuse), per_step(broyden));
  EXPECT_LT(broyden.corrector.jacobian_evaluations, reuse.corrector.jacobian_evaluations / 2);
  EXPECT_LT(worst_coupling_residual(sys, points, o.control.tolerances), 1.0);
  // The end states against fd's, in the controller's weights (both runs err by about rtol).
  const auto& a = points.back().y;
  const auto& b = fd_points.back().y;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t k = 0; k < a[i].size(); ++k) {
      worst = std::max(worst, std::abs(a[i][k] - b[i][k]) / (1e-4 * std::abs(b[i][k]) + 1e-6));
    }
  }
  EXPECT_LT(worst, 10.0);
}

// Global error at t_end against the star's exact solution, fixed H, κ = 1.
double star_error(const std::optional<corrector::CorrectorOptions>& c, double h) {
  testing::Star star;
  const auto sys = testing::make_star_system(star);
  const double t_end = 0.2;
  auto o = fixed(t_end, h, 1, c);
  o.control.tolerances = control::ErrorTolerances::for_rtol(1e-10);
  const auto points = run(sys, o, testing::reference_solver());
  double e = 0.0;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto exact = testing::star_exact(star, i, points.back().t);
    e = std::max(e, std::abs(points.back().y[i][0] - exact[0]));
  }
  return e;
}

// Seed 000 §5.1: "the convergence order is the same as for the explicit approach": global
// O(H^{κ+1}) = O(H²) at κ = 1 for explicit, implicit and waveform.
TEST(ImplicitScheme, GlobalOrderEqualsTheExplicitOne) {
  for (const auto& [name, c] :
       std::vector<std::pair<const char*, std::optional<corrector::CorrectorOptions>>>{
           {"explicit", std::nullopt},
           {"implicit", newton()},
           {"implicit without the final pass", without_final_pass()},
           {"waveform", with_iteration(corrector::IterationKind::kWaveform)}}) {
    const double e1 = star_error(c, 4e-3), e2 = star_error(c, 2e-3), e3 = star_error(c, 1e-3);
    const double slope = std::log(e1 / e3) / std::log(4.0);
    std::printf("[order %s] errors %.3e %.3e %.3e slope %.2f\n", name, e1, e2, e3, slope);
    EXPECT_NEAR(slope, 2.0, 0.3) << name;
  }
}

// Seed 000 App. A: for free bodies sap is exact, so sap and fd runs agree to the solver's
// accuracy, and sap runs no perturbed integrations.
TEST(ImplicitScheme, SapEqualsFdWhereSapIsExactAndRunsNoPerturbedRuns) {
  testing::Star star;
  const auto sys = testing::make_star_system(star);
  auto fd = fixed(0.1, 2e-3, 2, newton());
  auto sap = fd;
  sap.corrector->jacobian = "sap";
  schemes::SchemeResult rf, rs;
  const auto a = run(sys, fd, testing::reference_solver(), &rf);
  const auto b = run(sys, sap, testing::reference_solver(), &rs);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t n = 0; n < a.size(); ++n) {
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(a[n].u[k], b[n].u[k], 1e-8) << n;
  }
  EXPECT_GT(rf.time.extra_runs_ns, 0);
  EXPECT_EQ(rs.time.extra_runs_ns, 0);
}

// K-5.1 (seed 000 §5.1, Fig. 5.4 left; MODELS K-5.1): κ = 2 on the nonlinear chain. Explicit
// diverges at H = 2.5e-5 s (stable at 1e-5 [S]), waveform (ω = 0.3) runs at 5e-5 s but not at
// 1e-4 s, implicit runs at 2.5e-4 s [S: explicit ≤ 1e-5, waveform ≤ 5e-5, implicit ≤ 2.5e-4].
// Runs end at 0.02 s: the explicit and waveform failures come at 9 ms and 19 ms.
TEST(K51, LargestStableStepIsOrderedExplicitWaveformImplicit) {
  const auto config =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/k-5.1.toml");
  const auto attempt = [&](config::CosimScheme scheme, double h) {
    run::CosimOptions o;
    o.scheme = scheme;
    o.step_size = h;
    o.stop_time = 0.02;
    o.executor = config::ExecutorKind::kInProcess;
    o.output_file = ::testing::TempDir() + "k51-stability.csv";
    try {
      run::run_cosimulation(config, o);
      return true;
    } catch (const schemes::SubsystemFailure&) {
      return false;
    } catch (const run::Diverged&) {  // the guard saw it grow before a subsystem failed
      return false;
    }
  };
  EXPECT_FALSE(attempt(config::CosimScheme::kExplicit, 2.5e-5));
  EXPECT_TRUE(attempt(config::CosimScheme::kWaveform, 5e-5));
  EXPECT_FALSE(attempt(config::CosimScheme::kWaveform, 1e-4));
  EXPECT_TRUE(attempt(config::CosimScheme::kImplicit, 2.5e-4));
}

// K-5.5 (seed 000 §5.5, Table 5.6; MODELS S-5.5): the asymmetric two-mass oscillator with
// m_1 = 1e-2 kg, m_2 = 1 kg, c_1 = c_c = c_2 = 1e6 N/m and coupling damping d_c = 1e4 Ns/m,
// harmonic 1e5 N at 50 1/s on m_2, x_0 = (0.05, 0) m; exMD / imMD at rtol 1e-3 with order
// control. Explicit crawls (the stiff damped coupling limits H) while implicit stays
// efficient [S: explicit inefficient at large m_r with high d_c]; measured 30774 vs 2175 steps.
TEST(K55, ExplicitCrawlsWhereImplicitStaysEfficient) {
  library::ChainParameters p;
  p.mass = {1e-2, 1.0};
  p.element = {{1e6, 0, 0, 0, 3, 3}, {1e6, 1e4, 0, 0, 3, 3}, {1e6, 0, 0, 0, 3, 3}};
  p.forces.resize(2);
  p.forces[1].harmonic.push_back({1e5, 50.0, 0.0});
  p.x0 = {5e-2, 0.0};
  p.v0 = {0.0, 0.0};
  const auto sys = system::make_chain_system(p, {0, 1, 2});
  ida::IntegratorOptions solver;
  solver.rtol = 1e-6;
  solver.atol_pos = 1e-9;
  solver.atol_vel = 1e-6;
  auto ex = testing::controlled(0.05, control::Estimator::kExMD, 1e-3);
  ex.control.h = 1e-6;
  auto im = ex;
  im.control.estimator = control::Estimator::kImMD;
  im.corrector = newton();
  schemes::SchemeResult re, ri;
  run(sys, ex, solver, &re);
  run(sys, im, solver, &ri);
  std::printf("[K-5.5] exMD %llu steps, imMD %llu steps (%.2f passes per step)\n",
              static_cast<unsigned long long>(re.steps.accepted),
              static_cast<unsigned long long>(ri.steps.accepted), ri.corrector.mean_passes());
  EXPECT_GT(re.steps.accepted, 5 * ri.steps.accepted);
  EXPECT_LT(ri.corrector.mean_passes(), 3.0);
}

TEST(ImplicitScheme, RefusesExplicitEstimatorsAndMissingSapModels) {
  const auto p = testing::test_chain(6);
  const auto sys = system::make_chain_system(p, library::equal_partition(6, 2));
  auto o = testing::controlled(1e-3, control::Estimator::kExMD, 1e-4);
  o.corrector = newton();
  schemes::IterativeScheme scheme(*o.corrector);
  EXPECT_THROW(scheme.start(sys, o), std::invalid_argument);
  auto bad = newton();
  bad.tau = 0.0;
  EXPECT_THROW(schemes::IterativeScheme{bad}, std::invalid_argument);
  bad = with_iteration(corrector::IterationKind::kWaveform);
  bad.omega = 1.0;
  EXPECT_THROW(schemes::IterativeScheme{bad}, std::invalid_argument);
}

}  // namespace
}  // namespace macrostep
