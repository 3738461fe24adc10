// K-5.3 safety factor Γ of the macro-step size controller, scaled in time (seed 000 §5.3,
// Table 5.3, Figs. 5.58 and 5.60; METHODS.md §6.2, §7.5; spec/MODELS.md K-5.3): without a
// safety factor (Γ = 1) about every other macro step fails the local error test (≈ 45 %
// [S]); with Γ = 6 the failed-step ratio N_fail/N_mac is 1-5 % depending on rtol [S]; the
// ratio falls steeply over Γ ∈ [2, 6] while the number of macro steps rises [S].
//
// Model (Table 5.3, full size): n_K = 150 masses m = 5e-2 kg, c = 2.5e6 N/m, d = 25 Ns/m,
// C = 1e10 N/m^3, D = 1e-4 Ns^3/m^3 (e_x = e_v = 3), both ends fixed [SI], zero initial state
// [SI]; modified sine ΔF·sin(Ω t)^95 on 50 % of the masses with ΔF = ±[1e6, 1e7] N and
// Ω ∈ [500, 5000] 1/s drawn by library::realize with seed 1 [SI: MODELS §0 draws];
// n_s = 15 subsystems of 10 masses.
//
// Method, as in the study: explicit Jacobi with exMD (and the implicit scheme with imMD), κ = 2.
// The seed runs "quadratic approximation polynomials" (Table 5.3 lists κ = 2 and §5.3 isolates the
// effect of Γ), so order control is off: OrderStrategy::kFixed with κ_max = 2 (κ = 2 as soon as the
// history allows, after the variable-step start-up of §3.4 from H_init = 1e-9 s [SI]). No dead
// zone, [r_min, r_max] = [0.5, 1.5], atol_pos = 1e-4·rtol, atol_vel = rtol; rtol = 1e-4 (the middle
// of the three figure-only tolerance sets, [SI] 1e-3, 1e-4, 1e-5); the other two are used for
// the Γ = 6 check. Subsystem IDA at the seed 000 §5 defaults (rtol 1e-6, atol_pos 1e-9,
// atol_vel 1e-6); rtol 1e-8 gave the same ratios to ±0.005 at 4× the cost.
//
// Scaling: t_sim = 2 ms instead of 0.1 s (50× shorter), nothing else changed, so the
// stiffness, mass and force scales (hence H, micro steps per macro step and the failure
// behaviour) are those of the study. 2 ms holds ~1300-1900 macro steps (the ratio is a mean
// over them, statistical spread ≈ ±0.015) and one to several force spikes per forced mass
// (half-maximum width ≈ 0.24/Ω = 50-500 µs). A run takes 0.8-1.6 s in Release.
// Measured before fixing the bands (seed 1; seeds 2 and 3 within ±0.006): Γ = 1: 0.43;
// Γ = 2: 0.12; Γ = 4: 0.04; Γ = 6: 0.019 (rtol 1e-4), 0.035 (1e-3), 0.010 (1e-5). The 5 ms
// run gives 0.447 at Γ = 1 and 0.022 at Γ = 6.
//
// Bands: Γ = 1: 35-55 % (MODELS target; the seed's "about 45 %" read from Fig. 5.60 ± 10
// points, which covers the seed-to-seed and duration spread seen here, 0.39-0.45); Γ = 6:
// ≤ 5 % for each rtol (the seed's upper end); monotone decrease of the ratio and increase of
// N_mac over Γ = 1, 2, 4, 6 [S].
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

constexpr double kSimulatedTime = 2e-3;  // scaled from 0.1 s

library::ChainParameters k53_chain() {
  library::ChainSpec s;
  s.masses = 150;
  s.mass = library::ValueSpec::fixed(5e-2);
  s.element.c = 2.5e6;
  s.element.d = 25.0;
  s.element.C = 1e10;
  s.element.D = 1e-4;
  s.element.ex = 3.0;
  s.element.ev = 3.0;
  library::ForceGroupSpec f;
  f.type = library::ForceType::kModifiedSine;
  f.selection.kind = library::MassSelection::Kind::kFraction;
  f.selection.fraction = 0.5;
  f.amplitude = library::ValueSpec::signed_uniform(1e6, 1e7);
  f.omega = library::ValueSpec::uniform(500.0, 5000.0);
  f.phase = library::ValueSpec::fixed(0.0);
  f.exponent = 95.0;
  s.forces.push_back(f);
  s.seed = 1;
  return library::realize(s);
}

struct Statistics {
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;
  double ratio() const { return static_cast<double>(rejected) / static_cast<double>(accepted); }
};

class SafetyFactor : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    params_ = new library::ChainParameters(k53_chain());
    system_ = new system::CoupledSystem(
        system::make_chain_system(*params_, library::equal_partition(params_->size(), 15)));
    cache_ = new std::map<std::tuple<double, double, bool>, Statistics>();
  }
  static void TearDownTestSuite() {
    delete cache_;
    delete system_;
    delete params_;
  }

  // One controlled exMD run, or imMD with the implicit scheme (fd Jacobian, METHODS §4.1-4.3);
  // each (Γ, rtol, scheme) is run once per test program.
  static Statistics run(double gamma, double rtol, bool implicit = false) {
    const auto key = std::make_tuple(gamma, rtol, implicit);
    if (auto it = cache_->find(key); it != cache_->end()) return it->second;
    const auto& sys = *system_;
    schemes::SchemeOptions o;
    o.control.mode = control::StepSizeMode::kVariable;
    o.control.t_end = kSimulatedTime;
    o.control.h = 1e-9;  // H_init [SI, MODELS §1.7]
    o.control.estimator = implicit ? control::Estimator::kImMD : control::Estimator::kExMD;
    if (implicit) o.corrector = corrector::CorrectorOptions{};
    o.control.order.strategy = control::OrderStrategy::kFixed;
    o.control.order.kappa_max = 2;
    o.control.step.safety = gamma;
    o.control.step.dead_zone = false;
    o.control.step.r_min = 0.5;
    o.control.step.r_max = 1.5;
    o.control.tolerances = control::ErrorTolerances::for_rtol(rtol);
    o.control.tolerances.atol_pos = 1e-4 * rtol;  // §5.3
    o.control.tolerances.atol_vel = rtol;
    executors::InProcessOptions eo;
    eo.solver.rtol = 1e-6;
    eo.solver.atol_pos = 1e-9;
    eo.solver.atol_vel = 1e-6;
    eo.rollback = true;
    eo.threads = 1;
    executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
    schemes::SchemeResult r;
    const auto scheme = schemes::make_scheme(o);
    schemes::run_scheme(
        sys, ex, *scheme, o, [](const schemes::AcceptedPoint&) {}, {}, r);
    Statistics s{r.steps.accepted, r.steps.rejected};
    EXPECT_EQ(
        r.steps.accepted_by_kappa[2] + r.steps.accepted_by_kappa[1] + r.steps.accepted_by_kappa[0],
        r.steps.accepted)
        << "order control must stay off (kappa <= 2)";
    std::printf(
        "[K-5.3] %s Gamma=%g rtol=%g: N_mac=%llu N_fail=%llu failed-step ratio %.3f mean H %.3e\n",
        implicit ? "imMD" : "exMD", gamma, rtol, static_cast<unsigned long long>(s.accepted),
        static_cast<unsigned long long>(s.rejected), s.ratio(), r.mean_h());
    (*cache_)[key] = s;
    return s;
  }

  static library::ChainParameters* params_;
  static system::CoupledSystem* system_;
  static std::map<std::tuple<double, double, bool>, Statistics>* cache_;
};

library::ChainParameters* SafetyFactor::params_ = nullptr;
system::CoupledSystem* SafetyFactor::system_ = nullptr;
std::map<std::tuple<double, double, bool>, Statistics>* SafetyFactor::cache_ = nullptr;

// seed 000 §5.3, Fig. 5.60: "without using a safety factor (Γ = 1), the failed step ratio is
// about 45 %".
TEST_F(SafetyFactor, WithoutSafetyFactorAboutEveryOtherStepFails) {
  const Statistics s = run(1.0, 1e-4);
  EXPECT_GT(s.accepted, 500u);
  EXPECT_GE(s.ratio(), 0.35);
  EXPECT_LE(s.ratio(), 0.55);
}

// seed 000 §5.3, Fig. 5.60: "When the safety factor is increased to Γ = 6, the failed step
// ratio is 1 % - 5 %, depending on the error tolerances".
TEST_F(SafetyFactor, SafetyFactorSixKeepsFailuresBelowFivePercent) {
  for (double rtol : {1e-3, 1e-4, 1e-5}) {
    const Statistics s = run(6.0, rtol);
    EXPECT_GT(s.accepted, 500u) << "rtol " << rtol;
    EXPECT_LE(s.ratio(), 0.05) << "rtol " << rtol;
  }
}

// seed 000 §5.3, Fig. 5.58: the number of macro steps increases with Γ and the number of
// failed steps decreases rapidly over Γ ∈ [2, 6].
TEST_F(SafetyFactor, FailedStepRatioFallsAndStepCountRisesWithGamma) {
  Statistics previous = run(1.0, 1e-4);
  for (double gamma : {2.0, 4.0, 6.0}) {
    const Statistics s = run(gamma, 1e-4);
    EXPECT_LT(s.ratio(), previous.ratio()) << "Gamma " << gamma;
    EXPECT_LT(s.rejected, previous.rejected) << "Gamma " << gamma;
    EXPECT_GT(s.accepted, previous.accepted) << "Gamma " << gamma;
    previous = s;
  }
}

// seed 000 §5.3: the same for the implicit scheme with imMD ("explicit and implicit"): about
// 45 % failed steps at Γ = 1, at most 5 % at Γ = 6 (MODELS K-5.3 target).
TEST_F(SafetyFactor, ImplicitImMDFailsAboutEveryOtherStepWithoutAndFewWithGammaSix) {
  const Statistics one = run(1.0, 1e-4, true), six = run(6.0, 1e-4, true);
  EXPECT_GT(one.accepted, 300u);
  EXPECT_GE(one.ratio(), 0.35);
  EXPECT_LE(one.ratio(), 0.55);
  EXPECT_LE(six.ratio(), 0.05);
  EXPECT_GT(six.accepted, one.accepted);
}

}  // namespace
}  // namespace macrostep
