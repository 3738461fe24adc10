// K-5.1 convergence of the explicit Jacobi co-simulation (seed 000 §5.1, Table 5.1, Listing 5.1;
// spec/MODELS.md K-5.1; METHODS.md §3.1 "Orders", §7.2 O1): with a fixed macro step H and
// degree κ the global error of the coupling bodies is O(H^{κ+1}), the local error
// O(H^{κ+3}) in positions and O(H^{κ+2}) in velocities; the least-squares predictor
// (N_sp = 8, §2.3) keeps the global order.
//
// Model (Table 5.1, METHODS §7.5): 50 masses m = 10 kg, c = 1e6 N/m, d = 1e2 Ns/m,
// C = 1e12 N/m^6 (e_x = 6), D = 1 Ns^3/m^3 (e_v = 3), right end free, harmonic force
// 5e7 N·sin(500 t) on mass 50, zero initial state (D-44); 10 subsystems of 5 masses;
// subsystem IDA rtol 1e-10, atol_pos 1e-13, atol_vel 1e-10; fixed H with the Listing 5.1
// start (StepSizeMode::kFixed, fixed_start_ramp).
//
// Scaling (so that a run takes ~0.1-0.3 s in Release): the seed integrates 0.25 s; here the
// runs end at T_end = 3 ms + H. From 1 ms on the elements next to the forced mass are
// strongly nonlinear (Δx ≈ 0.14-0.19 m: the e_x = 6 term is 60-280 times the linear one) and
// the stability pattern of the seed shows (checked in 5-10 ms runs): κ = 2 fails at
// H = 4e-5 (at 3.3 ms), κ = 3 at 2e-5 (4.3 ms), while κ = 0 runs at 5e-5 [S: explicit κ = 0
// stable at 5e-5; κ = 3 needs ~10× less].
//
// Step sizes: H ∈ {1e-5, 5e-6, 2.5e-6} for every κ.
//  - Stable for all κ on this interval (κ = 3 is stable at 1e-5 for the first 4 ms).
//  - Above the integrator floor: at H = 1.25e-6 the forced-end subsystem takes a single IDA
//    micro step per macro step. BDF then evaluates the input only at the step ends T_{N+1},
//    where the samples form a smooth sequence, so its error test no longer notices the
//    polynomial jumps at T_N; the step's integration error grows from ~1e-6 to ~1e-2 m/s
//    (κ = 0) and the error curves flatten [S: "no gain below H = 1e-6 s"].
//  - All three divide the comparison spacing 2e-4 s, so every run has the same check points.
//
// Local error (METHODS §4.2 / MODELS §4.2 "local reference"): at the fixed macro points
// T_N ∈ {1.0, 1.4, 1.8, 2.2, 2.6, 3.0} ms (the same for every H) the full chain state z_N of
// the co-simulation (Executor::accepted_state) starts
//   - the local reference: the monolithic chain from (T_N, z_N), IDA rtol 1e-13, integrated
//     to T_{N+1} = T_N + H (RestartedModel keeps the true time, so the harmonic force is the
//     same as in the co-simulation);
//   - the "exact-integration" step: every subsystem from its part of z_N with the step
//     polynomial the scheme used (rebuilt from the accepted history with polynomials::builders),
//     IDA rtol 1e-13. This is the local error of the coupling scheme with exact subsystem
//     integration, which is what the order statements of seed 000 Eq. 3.1 are about.
// The co-simulation's own local error is e_cs = z_cs(T_{N+1}) − z_ref and the scheme's
// e_ex = z_exact(T_{N+1}) − z_ref; their difference is the subsystem integrator's error
// (rtol 1e-10). Errors are root-sum-squares over the six T_N and the 18 coupling bodies.
// Positions of κ = 2, 3 reach the integrator floor (~3e-11 m here: rtol_IDA·|x|) at
// H ≤ 5e-6, so their order is checked on e_ex; the co-simulation's own positions are checked
// for κ = 0, 1 and its velocities for all κ. At the largest H the integrator error must be
// below 5 % of the local coupling error (the step really used the scheme's polynomial).
//
// Threshold: every slope is the least-squares slope of log(error) over log(H) on the three H
// and must lie within ±0.3 of the theoretical order (MODELS K-5.1 target). The margin covers
// the pre-asymptotic curvature of the error curves (at the largest H, ω·H ≈ 0.1-0.2 for the
// stiffened elements next to the forced mass) and, for the smallest errors, the integrator
// floor. Measured slopes are printed ([K-5.1] lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "../support/test_chain.hpp"
#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/polynomials/support_points.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"
#include "verification_support.hpp"

namespace macrostep {
namespace {

constexpr double kCheckSpacing = 2e-4;  // global-error check points k·2e-4
constexpr double kWindowEnd = 3e-3;
const std::vector<double> kLocalPoints = {1.0e-3, 1.4e-3, 1.8e-3, 2.2e-3, 2.6e-3, 3.0e-3};
const std::vector<double> kSteps = {1e-5, 5e-6, 2.5e-6};
constexpr double kConvergenceSlopeTolerance = 0.3;

// Table 5.1 with the §5.1 forcing (seed 000 §5.1; MODELS K-5.1).
library::ChainParameters k51_chain() {
  return testing::k51_chain(/*nonlinear=*/true);
}

ida::IntegratorOptions tight(double rtol) {
  ida::IntegratorOptions o;
  o.rtol = rtol;
  o.atol_pos = 1e-3 * rtol;
  o.atol_vel = rtol;
  return o;
}

struct Errors {
  double global = 0.0;                      // max |x − x_ref| / max |x_ref| over check points
  double local_pos = 0.0, local_vel = 0.0;  // e_cs: co-simulation vs local reference
  double exact_pos = 0.0, exact_vel = 0.0;  // e_ex: exact-integration step vs local reference
  double integ_pos = 0.0, integ_vel = 0.0;  // co-simulation vs exact-integration step
};

class Convergence : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    params_ = new library::ChainParameters(k51_chain());
    system_ = new system::CoupledSystem(
        system::make_chain_system(*params_, library::equal_partition(50, 10)));
    whole_ = new library::ChainSegment(*params_, 0, params_->size());
    // Global reference (MODELS §4.2, tighter than rtol 1e-10 because the smallest global
    // errors measured here are ~3e-9 relative).
    reference_ = new std::vector<std::vector<double>>();
    ida::Integrator ref(*whole_, tight(1e-12));
    std::vector<double> z(whole_->state_size()), zp(z.size());
    for (int k = 1; k * kCheckSpacing <= kWindowEnd + 1e-12; ++k) {
      ref.advance_to(k * kCheckSpacing);
      ref.state(z, zp);
      reference_->push_back(z);
    }
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete whole_;
    delete system_;
    delete params_;
  }

  // One fixed-H run to T_end = 3 ms + H with all error measurements.
  static Errors measure(int kappa, double h, bool least_squares) {
    const auto& sys = *system_;
    schemes::SchemeOptions o;
    o.control.mode = control::StepSizeMode::kFixed;
    o.control.fixed_start_ramp = true;  // Listing 5.1
    o.control.t_end = kWindowEnd + h;
    o.control.h = h;
    o.control.kappa_fixed = kappa;
    o.control.estimator = control::Estimator::kNone;
    o.least_squares = least_squares;
    o.least_squares_points = 8;
    executors::InProcessOptions eo;
    eo.solver = tight(1e-10);  // seed 000 §5.1: rtol_IDA 1e-10, atol 1e-13 / 1e-10
    eo.rollback = false;
    eo.threads = 1;
    executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);

    Errors e;
    double global_scale = 0.0;
    std::size_t next_check = 0, next_local = 0;
    bool pending = false;  // a local step starts at the last accepted point
    double t_n = 0.0;
    std::vector<double> z_n;
    polynomials::CouplingHistory hist(sys.coupling_count(), 16);
    auto near = [h](double a, double b) { return std::abs(a - b) < 1e-3 * h; };

    schemes::run_explicit(sys, ex, o, [&](const schemes::AcceptedPoint& p) {
      if (p.step == 0) {
        hist.push(p.time, p.u);
        return;
      }
      const bool check = next_check < reference_->size() &&
                         near(p.time, static_cast<double>(next_check + 1) * kCheckSpacing);
      const bool local_start =
          next_local < kLocalPoints.size() && near(p.time, kLocalPoints[next_local]);
      if (check || local_start || pending) {
        const std::vector<double> z = verification::chain_state(sys, ex);
        if (check) {
          const auto& zr = (*reference_)[next_check++];
          for (const auto& m : sys.monitored_outputs()) {
            if (m.group != control::WeightGroup::kPosition) continue;
            const std::size_t i = verification::chain_state_index(m);
            e.global = std::max(e.global, std::abs(z[i] - zr[i]));
            global_scale = std::max(global_scale, std::abs(zr[i]));
          }
        }
        if (pending) {
          add_local_errors(p.kappa, least_squares, hist, t_n, z_n, p.time, z, e);
          pending = false;
        }
        if (local_start) {
          ++next_local;
          pending = true;
          t_n = p.time;
          z_n = z;
        }
      }
      hist.push(p.time, p.u);
    });
    EXPECT_EQ(next_check, reference_->size()) << "check points missed";
    EXPECT_EQ(next_local, kLocalPoints.size()) << "local points missed";
    EXPECT_FALSE(pending);
    e.global /= global_scale;
    e.local_pos = std::sqrt(e.local_pos);
    e.local_vel = std::sqrt(e.local_vel);
    e.exact_pos = std::sqrt(e.exact_pos);
    e.exact_vel = std::sqrt(e.exact_vel);
    e.integ_pos = std::sqrt(e.integ_pos);
    e.integ_vel = std::sqrt(e.integ_vel);
    return e;
  }

  // Squared local errors of the step (t_n, z_n) → (t1, z_cs), added to e.
  static void add_local_errors(int kappa, bool least_squares,
                               const polynomials::CouplingHistory& hist, double t_n,
                               const std::vector<double>& z_n, double t1,
                               const std::vector<double>& z_cs, Errors& e) {
    const auto& sys = *system_;
    // Local reference: the monolithic chain from the co-simulation state.
    verification::RestartedModel restarted(*whole_, t_n, z_n);
    ida::Integrator ref(restarted, tight(1e-13));
    ref.advance_to(t1);
    std::vector<double> z_ref(z_n.size()), zp(z_n.size());
    ref.state(z_ref, zp);
    // Exact-integration step: the scheme's predictor and step polynomial (METHODS §3.1
    // steps 1-2), every subsystem integrated tightly from its part of z_n.
    std::vector<double> u_pre(sys.coupling_count());
    if (least_squares && hist.size() >= 8 && 8 > kappa + 1) {
      polynomials::least_squares_prediction(hist, kappa, 8, t1, u_pre);
    } else {
      polynomials::lagrange_prediction(hist, kappa, t1, u_pre);
    }
    std::vector<double> z_ex;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
      const auto& sub = sys.subsystem(i);
      const auto in = sys.feed_channels(i);
      const std::vector<std::size_t> channels(in.begin(), in.end());
      const polynomials::SupportPoints sp =
          polynomials::step_polynomial(hist, kappa, t1, u_pre, channels);
      const polynomials::SupportPointInput input(sp, sub.input_size());
      const std::vector<double> zi(
          z_n.begin() + static_cast<std::ptrdiff_t>(offset),
          z_n.begin() + static_cast<std::ptrdiff_t>(offset + sub.state_size()));
      verification::RestartedModel part(sub, t_n, zi);
      ida::Integrator integ(part, tight(1e-13), &input);
      integ.advance_to(t1);
      std::vector<double> z(sub.state_size()), zpi(z.size());
      integ.state(z, zpi);
      z_ex.insert(z_ex.end(), z.begin(), z.end());
      offset += sub.state_size();
    }
    auto sq = [](double a) { return a * a; };
    for (const auto& m : sys.monitored_outputs()) {
      const std::size_t i = verification::chain_state_index(m);
      const bool pos = m.group == control::WeightGroup::kPosition;
      (pos ? e.local_pos : e.local_vel) += sq(z_cs[i] - z_ref[i]);
      (pos ? e.exact_pos : e.exact_vel) += sq(z_ex[i] - z_ref[i]);
      (pos ? e.integ_pos : e.integ_vel) += sq(z_cs[i] - z_ex[i]);
    }
  }

  struct Slopes {
    double global, local_pos, local_vel, exact_pos, exact_vel;
    std::vector<Errors> errors;
  };

  static Slopes run_series(int kappa, bool least_squares) {
    Slopes s{};
    std::vector<double> g, lp, lv, xp, xv;
    for (double h : kSteps) {
      const Errors e = measure(kappa, h, least_squares);
      std::printf(
          "[K-5.1] %s kappa=%d H=%.3g  global %.3e  local pos %.3e vel %.3e  exact pos %.3e "
          "vel %.3e  integrator pos %.2e vel %.2e\n",
          least_squares ? "LS8" : "Lagrange", kappa, h, e.global, e.local_pos, e.local_vel,
          e.exact_pos, e.exact_vel, e.integ_pos, e.integ_vel);
      g.push_back(e.global);
      lp.push_back(e.local_pos);
      lv.push_back(e.local_vel);
      xp.push_back(e.exact_pos);
      xv.push_back(e.exact_vel);
      s.errors.push_back(e);
    }
    s.global = verification::loglog_slope(kSteps, g);
    s.local_pos = verification::loglog_slope(kSteps, lp);
    s.local_vel = verification::loglog_slope(kSteps, lv);
    s.exact_pos = verification::loglog_slope(kSteps, xp);
    s.exact_vel = verification::loglog_slope(kSteps, xv);
    std::printf(
        "[K-5.1] %s kappa=%d slopes: global %.2f (expect %d)  local pos %.2f vel %.2f  exact pos "
        "%.2f (expect %d) vel %.2f (expect %d)\n",
        least_squares ? "LS8" : "Lagrange", kappa, s.global, kappa + 1, s.local_pos, s.local_vel,
        s.exact_pos, kappa + 3, s.exact_vel, kappa + 2);
    return s;
  }

  static void check_orders(int kappa) {
    const Slopes s = run_series(kappa, false);
    // (a) global order κ+1 of the coupling-body positions.
    EXPECT_NEAR(s.global, kappa + 1, kConvergenceSlopeTolerance) << "global order, kappa " << kappa;
    // (b) local order of the coupling scheme: κ+3 positions, κ+2 velocities.
    EXPECT_NEAR(s.exact_pos, kappa + 3, kConvergenceSlopeTolerance)
        << "local position order, kappa " << kappa;
    EXPECT_NEAR(s.exact_vel, kappa + 2, kConvergenceSlopeTolerance)
        << "local velocity order, kappa " << kappa;
    // The co-simulation's own local error: velocities for every κ, positions where they
    // stay above the integrator floor (κ ≤ 1).
    EXPECT_NEAR(s.local_vel, kappa + 2, kConvergenceSlopeTolerance)
        << "co-simulation velocities, kappa " << kappa;
    if (kappa <= 1) {
      EXPECT_NEAR(s.local_pos, kappa + 3, kConvergenceSlopeTolerance)
          << "co-simulation positions, kappa " << kappa;
    }
    // At the largest H the co-simulation's step is the exact-integration step up to its
    // integrator error, which is small against the coupling error (same polynomial).
    const Errors& big = s.errors.front();
    EXPECT_LT(big.integ_pos, 0.05 * big.exact_pos) << "kappa " << kappa;
    EXPECT_LT(big.integ_vel, 0.05 * big.exact_vel) << "kappa " << kappa;
  }

  static library::ChainParameters* params_;
  static system::CoupledSystem* system_;
  static library::ChainSegment* whole_;
  static std::vector<std::vector<double>>* reference_;
};

library::ChainParameters* Convergence::params_ = nullptr;
system::CoupledSystem* Convergence::system_ = nullptr;
library::ChainSegment* Convergence::whole_ = nullptr;
std::vector<std::vector<double>>* Convergence::reference_ = nullptr;

// seed 000 §5.1, Fig. 5.3 (nonlinear model): orders for κ = 0..3.
TEST_F(Convergence, Kappa0GlobalOrder1LocalOrders3And2) {
  check_orders(0);
}
TEST_F(Convergence, Kappa1GlobalOrder2LocalOrders4And3) {
  check_orders(1);
}
TEST_F(Convergence, Kappa2GlobalOrder3LocalOrders5And4) {
  check_orders(2);
}
TEST_F(Convergence, Kappa3GlobalOrder4LocalOrders6And5) {
  check_orders(3);
}

// seed 000 §5.1 (Fig. 5.4 right): the least-squares predictor with N_sp = 8 points and κ = 2
// "does not decrease the order of convergence" although its error is larger.
TEST_F(Convergence, LeastSquaresPredictorKeepsGlobalOrder) {
  const Slopes ls = run_series(2, true);
  EXPECT_NEAR(ls.global, 3.0, kConvergenceSlopeTolerance) << "global order with the LS predictor";
  // The fit through 8 points is a different predictor from Lagrange (it does not reproduce
  // the last point), so its error differs; the seed reports a larger error.
  const Errors lagrange = measure(2, kSteps.front(), false);
  EXPECT_GT(ls.errors.front().global, lagrange.global);
}

}  // namespace
}  // namespace macrostep
