// Jumps of the input polynomial at macro points: macrostep's explicit Jacobi against an
// independent exact-integration implementation of the same scheme (exact_jacobi.hpp; seed 000
// App. C / METHODS §7.1, D-37: matrix exponential of an augmented system that also generates the
// extrapolation polynomial).
//
// Model: K-5.1 linear (configs/k-5.1-linear.toml; MODELS K-5.1): 50 masses of 10 kg, c = 1e6 N/m,
// d = 1e2 Ns/m, right end free, 5e7 N·sin(500 t) on mass 50, 10 subsystems of 5, the study's IDA
// tolerances (rtol 1e-10, atol 1e-13 / 1e-10), fixed H = 1e-5 s from T = 0 (no Listing 5.1
// ramp, so that both implementations use the same grid), κ = 0..3.
//
// Error: over every macro point of [0, T] and the 18 coupling bodies, the RMS of the position
// errors scaled by the largest reference position and of the velocity errors scaled by the
// largest reference velocity; the reference is the exact monolithic solution. e_cs is
// macrostep's error, e_ex the exact scheme's. Where IDA takes about one micro step per macro
// step (here), keeping the BDF history across the jump at T_N inflates e_cs (1.2, 1.7,
// 2.0, 2.7 × e_ex for κ = 0..3); the goal is e_cs ≤ 1.25 e_ex.
//
// Window: T = 2 ms (200 macro steps): the error ratio is set by the local errors, which the
// window shows in full; a run takes a fraction of a second.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "exact_jacobi.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"
#include "verification_support.hpp"

namespace macrostep {
namespace {

constexpr double kH = 1e-5;
constexpr std::size_t kJumpSteps = 200;
constexpr double kGoal = 1.25;

library::ChainParameters k51_linear() {
  return testing::k51_chain(/*nonlinear=*/false);
}

ida::IntegratorOptions study_solver() {
  ida::IntegratorOptions o;
  o.rtol = 1e-10;
  o.atol_pos = 1e-13;
  o.atol_vel = 1e-10;
  return o;
}

// Scaled RMS error of trajectory `z` against `ref` over the coupling bodies `bodies`.
double scaled_error(const exact::Trajectory& z, const exact::Trajectory& ref,
                    const std::vector<std::size_t>& bodies) {
  double xs = 0.0, vs = 0.0;
  for (const auto& zr : ref) {
    for (const std::size_t b : bodies) {
      xs = std::max(xs, std::abs(zr[2 * b]));
      vs = std::max(vs, std::abs(zr[2 * b + 1]));
    }
  }
  double sum = 0.0;
  std::size_t count = 0;
  for (std::size_t k = 1; k < ref.size(); ++k) {
    for (const std::size_t b : bodies) {
      sum += std::pow((z[k][2 * b] - ref[k][2 * b]) / xs, 2) +
             std::pow((z[k][2 * b + 1] - ref[k][2 * b + 1]) / vs, 2);
      count += 2;
    }
  }
  return std::sqrt(sum / static_cast<double>(count));
}

struct Measurement {
  double e_cs = 0.0, e_ex = 0.0;
  long micro_steps = 0;
  double wall_s = 0.0;
  double ratio() const { return e_cs / e_ex; }
};

class Jumps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    chain_ = new library::ChainParameters(k51_linear());
    sizes_ = new std::vector<std::size_t>(library::equal_partition(50, 10));
    system_ = new system::CoupledSystem(system::make_chain_system(*chain_, *sizes_));
    reference_ = new exact::Trajectory(exact::exact_monolithic(*chain_, kH, kJumpSteps));
    bodies_ = new std::vector<std::size_t>();
    for (std::size_t k = 5; k < 50; k += 5) {
      bodies_->push_back(k - 1);
      bodies_->push_back(k);
    }
  }
  static void TearDownTestSuite() {
    delete bodies_;
    delete reference_;
    delete system_;
    delete sizes_;
    delete chain_;
  }

  // macrostep's explicit Jacobi (in-process) at κ with `jumps`, and the exact scheme.
  static Measurement measure(int kappa, const runner::JumpOptions& jumps,
                             std::size_t steps = kJumpSteps) {
    const auto& sys = *system_;
    schemes::SchemeOptions o;
    o.control.mode = control::StepSizeMode::kFixed;
    o.control.fixed_start_ramp = false;
    o.control.t_end = static_cast<double>(steps) * kH;
    o.control.h = kH;
    o.control.kappa_fixed = kappa;
    o.control.estimator = control::Estimator::kNone;
    executors::InProcessOptions eo;
    eo.solver = study_solver();
    eo.rollback = false;
    eo.threads = 1;
    eo.jumps = jumps;
    executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
    exact::Trajectory z{verification::chain_state(sys, ex)};
    const auto t0 = std::chrono::steady_clock::now();
    schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint& p) {
      if (p.step > 0) z.push_back(verification::chain_state(sys, ex));
    });
    Measurement m;
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(z.size(), steps + 1);
    const exact::Trajectory ref =
        steps == kJumpSteps ? *reference_ : exact::exact_monolithic(*chain_, kH, steps);
    m.e_cs = scaled_error(z, ref, *bodies_);
    m.e_ex = scaled_error(exact::exact_jacobi(*chain_, *sizes_, kH, kappa, steps), ref, *bodies_);
    for (std::size_t i = 0; i < sys.subsystem_count(); ++i)
      m.micro_steps += ex.total_stats(i).steps;
    std::printf(
        "[jumps] kappa %d policy %d micro_steps %d: e_cs %.4e e_ex %.4e ratio %.3f "
        "micro steps %ld wall %.3f s\n",
        kappa, static_cast<int>(jumps.policy), jumps.micro_steps, m.e_cs, m.e_ex, m.ratio(),
        m.micro_steps, m.wall_s);
    return m;
  }

  // The study's setting: the Listing 5.1 start-up ramp, then fixed H to t_end; the error is the
  // largest over every macro point and every body of |Δx|/X and |Δv|/V (X, V the largest
  // reference position and velocity), macrostep's against the exact scheme's on the same grid
  // with the same degrees (exact_jacobi.hpp), both against the exact monolithic solution.
  static Measurement measure_run(int kappa, const runner::JumpOptions& jumps, double t_end,
                                 double solver_rtol = 1e-10) {
    const auto& sys = *system_;
    schemes::SchemeOptions o;
    o.control.mode = control::StepSizeMode::kFixed;
    o.control.fixed_start_ramp = true;
    o.control.t_end = t_end;
    o.control.h = kH;
    o.control.kappa_fixed = kappa;
    o.control.estimator = control::Estimator::kNone;
    executors::InProcessOptions eo;
    eo.solver = study_solver();
    eo.solver.rtol = solver_rtol;
    eo.solver.atol_pos = 1e-3 * solver_rtol;
    eo.solver.atol_vel = solver_rtol;
    eo.rollback = false;
    eo.threads = 1;
    eo.jumps = jumps;
    executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
    exact::Trajectory z{verification::chain_state(sys, ex)};
    exact::Grid grid{{0.0}, {}};
    const auto t0 = std::chrono::steady_clock::now();
    schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint& p) {
      if (p.step == 0) return;
      z.push_back(verification::chain_state(sys, ex));
      grid.times.push_back(p.time);
      grid.kappa.push_back(p.kappa);
    });
    Measurement m;
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (run_grid_ != grid.times) {  // every run of a window has the same grid: one reference
      run_grid_ = grid.times;
      run_reference_ = exact::exact_monolithic(*chain_, grid.times);
    }
    const exact::Trajectory& ref = run_reference_;
    m.e_cs = max_error(z, ref);
    m.e_ex = max_error(exact::exact_jacobi(*chain_, *sizes_, grid), ref);
    for (std::size_t i = 0; i < sys.subsystem_count(); ++i)
      m.micro_steps += ex.total_stats(i).steps;
    std::printf(
        "[jumps-run] kappa %d policy %s micro_steps %d solver rtol %.0e: e_cs %.4e e_ex %.4e "
        "ratio %.3f micro steps %ld wall %.3f s\n",
        kappa, runner::to_string(jumps.policy), jumps.micro_steps, solver_rtol, m.e_cs, m.e_ex,
        m.ratio(), m.micro_steps, m.wall_s);
    return m;
  }

  static double max_error(const exact::Trajectory& z, const exact::Trajectory& ref) {
    double xs = 0.0, vs = 0.0, e = 0.0;
    for (const auto& zr : ref) {
      for (std::size_t i = 0; i < zr.size(); i += 2) {
        xs = std::max(xs, std::abs(zr[i]));
        vs = std::max(vs, std::abs(zr[i + 1]));
      }
    }
    for (std::size_t k = 0; k < ref.size(); ++k) {
      for (std::size_t i = 0; i < ref[k].size(); i += 2) {
        e = std::max(
            {e, std::abs(z[k][i] - ref[k][i]) / xs, std::abs(z[k][i + 1] - ref[k][i + 1]) / vs});
      }
    }
    return e;
  }

  static inline std::vector<double> run_grid_;
  static inline exact::Trajectory run_reference_;
  static library::ChainParameters* chain_;
  static std::vector<std::size_t>* sizes_;
  static system::CoupledSystem* system_;
  static exact::Trajectory* reference_;
  static std::vector<std::size_t>* bodies_;
};

library::ChainParameters* Jumps::chain_ = nullptr;
std::vector<std::size_t>* Jumps::sizes_ = nullptr;
system::CoupledSystem* Jumps::system_ = nullptr;
exact::Trajectory* Jumps::reference_ = nullptr;
std::vector<std::size_t>* Jumps::bodies_ = nullptr;

// The matrix exponential against closed forms: a rotation and a nilpotent Jordan block (whose
// exponential is the Taylor polynomial the exact scheme relies on).
TEST(ExactJacobi, ExpmMatchesClosedForms) {
  exact::Matrix r(2, 2);
  const double w = 7.3;
  r(0, 1) = w;
  r(1, 0) = -w;
  const exact::Matrix er = exact::expm(r);
  EXPECT_NEAR(er(0, 0), std::cos(w), 1e-14);
  EXPECT_NEAR(er(0, 1), std::sin(w), 1e-14);
  EXPECT_NEAR(er(1, 0), -std::sin(w), 1e-14);
  exact::Matrix j(4, 4);
  const double h = 0.37;
  for (std::size_t i = 0; i < 3; ++i) j(i, i + 1) = h;
  const exact::Matrix ej = exact::expm(j);
  EXPECT_NEAR(ej(0, 1), h, 1e-15);
  EXPECT_NEAR(ej(0, 2), h * h / 2, 1e-15);
  EXPECT_NEAR(ej(0, 3), h * h * h / 6, 1e-15);
  EXPECT_NEAR(ej(1, 0), 0.0, 1e-15);
}

// The exact monolithic chain agrees with IDA at rtol 1e-12 (the force signs, the free end and the
// harmonic generator are those of library::ChainSegment).
TEST_F(Jumps, ExactMonolithicMatchesIda) {
  library::ChainSegment whole(*chain_, 0, chain_->size());
  ida::IntegratorOptions tight;
  tight.rtol = 1e-12;
  tight.atol_pos = 1e-15;
  tight.atol_vel = 1e-12;
  ida::Integrator ref(whole, tight);
  ref.advance_to(static_cast<double>(kJumpSteps) * kH);
  std::vector<double> z(whole.state_size()), zp(z.size());
  ref.state(z, zp);
  const auto& ze = reference_->back();
  double scale = 0.0, diff = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    scale = std::max(scale, std::abs(ze[i]));
    diff = std::max(diff, std::abs(z[i] - ze[i]));
  }
  EXPECT_GT(scale, 1e-3);
  EXPECT_LT(diff / scale, 1e-8);
}

// With micro steps of H/16 IDA sees the whole polynomial: macrostep is the exact scheme up to the
// integrator's tolerance (a check of the exact implementation: its κ-th error is the scheme's).
TEST_F(Jumps, ResolvedPolynomialIsTheExactScheme) {
  runner::JumpOptions j;
  j.micro_steps = 16;
  for (int kappa = 0; kappa <= 3; ++kappa) {
    const Measurement m = measure(kappa, j);
    EXPECT_NEAR(m.ratio(), 1.0, 0.1) << "kappa " << kappa;
  }
}

// Keeping the BDF history across the jump (the default) inflates the error at κ = 3 beyond the
// goal, and what the option below removes.
TEST_F(Jumps, HistoryAcrossTheJumpInflatesTheError) {
  const Measurement m = measure(3, runner::JumpOptions{});
  EXPECT_GT(m.ratio(), kGoal);
}

// The goal: with the history shifted to the new polynomial at every T_N, macrostep's
// error is within 1.25× the exact scheme's for κ = 0..3, without a single extra micro step.
TEST_F(Jumps, ShiftedHistoryMeetsTheExactSchemeError) {
  for (int kappa = 0; kappa <= 3; ++kappa) {
    const Measurement keep = measure(kappa, runner::JumpOptions{});
    const Measurement shift = measure(kappa, runner::JumpOptions{runner::JumpPolicy::kShift, 0});
    EXPECT_LE(shift.ratio(), kGoal) << "kappa " << kappa;
    EXPECT_LT(shift.e_cs, keep.e_cs) << "kappa " << kappa;
    EXPECT_EQ(shift.micro_steps, keep.micro_steps) << "kappa " << kappa;
  }
}

// The candidate default "shift" with at least two micro steps per macro step in the study's
// setting: the Listing 5.1 start-up ramp and the max norm over every body and macro point of the
// first 10 ms (1 000 macro steps; shorter windows leave κ = 3 at the solver's rounding): within
// 1.25× the exact scheme's error at κ = 2 and 3, where keeping the history across the jump is not
// (measured: 1.000 and 1.009; keep 2.7 at κ = 2; κ = 0, 1: 1.000 against keep's 2.0, 2.4). The
// whole 0.25 s (DISABLED_PolicyCandidates; docs/results/2026-11-27-jump-policy.md): ≤ 1.007 for
// κ = 0..3, keep up to 2.9, shift alone 2.39 at κ = 3.
TEST_F(Jumps, ShiftWithTwoMicroStepsMeetsTheExactSchemeErrorWithTheStartUpRamp) {
  const runner::JumpOptions candidate{runner::JumpPolicy::kShift, 2};
  for (int kappa = 2; kappa <= 3; ++kappa) {
    EXPECT_LE(measure_run(kappa, candidate, 0.01).ratio(), kGoal) << "kappa " << kappa;
  }
  EXPECT_GT(measure_run(2, runner::JumpOptions{}, 0.01).ratio(), kGoal);  // keep, no floor
}

// The measurement behind the table in docs/results/state-of-the-work.md (not run by default): every
// option at κ = 0..3 over the study's whole 0.25 s (25 000 macro steps; about two minutes).
TEST_F(Jumps, DISABLED_OptionsTable) {
  std::vector<runner::JumpOptions> options;
  options.push_back({});
  options.push_back({runner::JumpPolicy::kShift, 0});
  options.push_back({runner::JumpPolicy::kRestart, 0});
  options.push_back({runner::JumpPolicy::kRestartAuto, 0});
  for (int m : {2, 4, 8}) options.push_back({runner::JumpPolicy::kKeep, m});
  for (const auto& j : options) {
    for (int kappa = 0; kappa <= 3; ++kappa) measure(kappa, j, 25000);
  }
}

// The candidates for the default policy in the study's setting (start-up ramp, max norm, the
// whole 0.25 s): not run by default; MACROSTEP_JUMPS_T shortens the window.
TEST_F(Jumps, DISABLED_PolicyCandidates) {
  const char* window = std::getenv("MACROSTEP_JUMPS_T");
  const double t_end = window != nullptr ? std::atof(window) : 0.25;
  const std::vector<runner::JumpOptions> options = {{runner::JumpPolicy::kKeep, 0},
                                                    {runner::JumpPolicy::kShift, 0},
                                                    {runner::JumpPolicy::kRestartAuto, 0},
                                                    {runner::JumpPolicy::kKeep, 2},
                                                    {runner::JumpPolicy::kShift, 2}};
  for (const auto& j : options) {
    for (int kappa = 0; kappa <= 3; ++kappa) measure_run(kappa, j, t_end);
  }
  for (int kappa = 0; kappa <= 3; ++kappa)
    measure_run(kappa, {runner::JumpPolicy::kShift, 0}, t_end, 1e-12);
}

}  // namespace
}  // namespace macrostep
