// Error estimators (METHODS §5.1; seed 000 §3.1, Eq. 3.6, 3.9–3.20; D-33).
#include "macrostep/control/estimators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "control_support.hpp"
#include "macrostep/polynomials/builders.hpp"

namespace mp = macrostep::polynomials;
namespace mct = macrostep::control;
namespace mt = macrostep::testing;

// §5.1 table, element-wise.
TEST(Estimators, EpsilonFormulas) {
  const std::vector<double> a = {1.0, -2.0, 3.0}, b = {1.5, -2.5, 2.0};
  std::vector<double> e(3);
  mct::local_extrapolation_error(a, b, e);
  EXPECT_EQ(e, (std::vector<double>{0.5, 0.5, 1.0}));
  mct::explicit_milne_error(a, b, 0.75, e);
  EXPECT_EQ(e, (std::vector<double>{0.375, 0.375, 0.75}));
  mct::implicit_milne_error(a, b, 0.75, e);  // (1 − ratio)·|pre − corrected|
  EXPECT_EQ(e, (std::vector<double>{0.125, 0.125, 0.25}));
  mct::coupling_variable_error(a, b, e);
  EXPECT_EQ(e, (std::vector<double>{0.5, 0.5, 1.0}));
  EXPECT_THROW(mct::coupling_variable_error(a, std::vector<double>{1.0}, e), std::invalid_argument);
}

// §6.1: concept-1 weights are taken at the continuing (nominal) solution, per group. The
// monitored outputs come interleaved (x_1, v_1, x_2, v_2) as the chain lists them.
TEST(Estimators, StateEstimateUsesNominalWeightsPerGroup) {
  using G = mct::WeightGroup;
  mct::ErrorTolerances tol;
  tol.rtol = 0.1;
  tol.atol_pos = 0.01;
  tol.atol_vel = 0.2;
  const std::vector<double> q = {1.0, 3.0}, qh = {1.02, 2.9}, v = {-2.0, 0.0}, vh = {-2.5, 0.1};
  const std::vector<double> y = {q[0], v[0], q[1], v[1]}, yh = {qh[0], vh[0], qh[1], vh[1]};
  const std::vector<G> groups = {G::kPosition, G::kVelocity, G::kPosition, G::kVelocity};
  const mct::MilneRatios ratios{0.75, 0.8};
  const auto est = mct::estimate_states(mct::Estimator::kExMD, y, yh, groups, ratios, tol);
  ASSERT_EQ(est.kind, mct::ErrorEstimate::Kind::kStates);
  const double ep0 = 0.75 * 0.02 / (0.01 + 0.1 * 1.0), ep1 = 0.75 * 0.1 / (0.01 + 0.1 * 3.0);
  const double ev0 = 0.8 * 0.5 / (0.2 + 0.1 * 2.0), ev1 = 0.8 * 0.1 / 0.2;
  EXPECT_NEAR(est.pos, std::sqrt((ep0 * ep0 + ep1 * ep1) / 2), 1e-15);
  EXPECT_NEAR(est.vel, std::sqrt((ev0 * ev0 + ev1 * ev1) / 2), 1e-15);
  const auto le = mct::estimate_states(mct::Estimator::kExLE, y, yh, groups, ratios, tol);
  EXPECT_NEAR(le.pos, est.pos / 0.75, 1e-15);
  const auto im = mct::estimate_states(mct::Estimator::kImMD, y, yh, groups, ratios, tol);
  EXPECT_NEAR(im.vel, est.vel * 0.2 / 0.8, 1e-15);
  EXPECT_THROW(mct::estimate_states(mct::Estimator::kExCV, y, yh, groups, ratios, tol),
               std::invalid_argument);
  const auto cv = mct::estimate_coupling_variables(q, qh, tol);  // weights at u_{N+1} = qh
  ASSERT_EQ(cv.kind, mct::ErrorEstimate::Kind::kCouplingVariables);
  const double eu0 = 0.02 / (1.0 + 0.1 * 1.02), eu1 = 0.1 / (1.0 + 0.1 * 2.9);
  EXPECT_NEAR(cv.u, std::sqrt((eu0 * eu0 + eu1 * eu1) / 2), 1e-15);
}

// METHODS §5.1, §6.1 (seed 000 Eq. 3.13, 3.21-3.23): the concept-1 norms are the hand-computed
// WRMS norms of each group, bit for bit the norms of the group's values taken apart (the
// summation order of the positions and of the velocities is the outputs' order), whatever the
// interleaving; per-component atol is indexed within the group; the test takes the max.
TEST(Estimators, StateEstimateIsTheWrmsNormOfEachGroup) {
  using G = mct::WeightGroup;
  mct::ErrorTolerances tol = mct::ErrorTolerances::for_rtol(1e-4);
  tol.atol_pos_each = {1e-7, 3e-7, 2e-8};
  const std::vector<G> groups = {G::kVelocity, G::kPosition, G::kPosition, G::kVelocity,
                                 G::kPosition};
  const std::vector<double> y = {0.31, 1e-4, -2e-4, -1.7, 4e-5};
  const std::vector<double> yh = {0.3099, 1.0003e-4, -2.0011e-4, -1.7004, 3.99e-5};
  const mct::MilneRatios ratios{38.0 / 45.0, 9.0 / 10.0};
  const auto est = mct::estimate_states(mct::Estimator::kExMD, y, yh, groups, ratios, tol);
  const std::vector<double> pos = {y[1], y[2], y[4]}, pos_h = {yh[1], yh[2], yh[4]};
  const std::vector<double> vel = {y[0], y[3]}, vel_h = {yh[0], yh[3]};
  EXPECT_EQ(est.pos, mct::scaled_difference_norm(pos, pos_h, ratios.pos, pos, tol,
                                                 mct::WeightGroup::kPosition));
  EXPECT_EQ(est.vel, mct::scaled_difference_norm(vel, vel_h, ratios.vel, vel, tol,
                                                 mct::WeightGroup::kVelocity));
  double sp = 0.0;
  for (std::size_t k = 0; k < 3; ++k) {
    const double e = ratios.pos * std::abs(pos[k] - pos_h[k]) /
                     (tol.atol_pos_each[k] + tol.rtol * std::abs(pos[k]));
    sp += e * e;
  }
  double sv = 0.0;
  for (std::size_t k = 0; k < 2; ++k) {
    const double e =
        ratios.vel * std::abs(vel[k] - vel_h[k]) / (tol.atol_vel + tol.rtol * std::abs(vel[k]));
    sv += e * e;
  }
  EXPECT_NEAR(est.pos, std::sqrt(sp / 3.0), 1e-14 * est.pos);
  EXPECT_NEAR(est.vel, std::sqrt(sv / 2.0), 1e-14 * est.vel);
  EXPECT_EQ(est.norm(), std::max(est.pos, est.vel));
  // Concept 1 monitors positions and velocities only.
  const std::vector<G> with_u = {G::kVelocity, G::kPosition, G::kCouplingVariable, G::kVelocity,
                                 G::kPosition};
  EXPECT_THROW(mct::estimate_states(mct::Estimator::kExLE, y, yh, with_u, ratios, tol),
               std::invalid_argument);
  EXPECT_THROW(mct::estimate_states(mct::Estimator::kExLE, y, yh, std::vector<G>(2), ratios, tol),
               std::invalid_argument);
}

// D-33: with fewer than κ+2 points exLE/exMD fall back to exCV, imMD to imCV.
TEST(Estimators, ShortHistoryFallsBackToCouplingVariables) {
  using E = mct::Estimator;
  EXPECT_EQ(mct::effective_estimator(E::kExMD, 2, 3), E::kExCV);
  EXPECT_EQ(mct::effective_estimator(E::kExMD, 2, 4), E::kExMD);
  EXPECT_EQ(mct::effective_estimator(E::kExLE, 0, 1), E::kExCV);
  EXPECT_EQ(mct::effective_estimator(E::kExLE, 0, 2), E::kExLE);
  EXPECT_EQ(mct::effective_estimator(E::kImMD, 1, 2), E::kImCV);
  EXPECT_EQ(mct::effective_estimator(E::kImMD, 1, 3), E::kImMD);
  EXPECT_EQ(mct::effective_estimator(E::kExCV, 5, 1), E::kExCV);
  EXPECT_EQ(mct::comparison_runs(E::kExMD), 1);
  EXPECT_EQ(mct::comparison_runs(E::kImMD), 0);
  EXPECT_EQ(mct::history_points_required(E::kExLE, 3), 5u);
}

namespace {

// The double integrator q'' = u(t) from q = v = 0 at T_N, integrated exactly (Gauss–Legendre,
// 12 points) with the input from a support-point polynomial or from the true input f.
// For this system the error model of seed 000 Eq. 3.9/3.10 holds with A = 1.
struct RunResult {
  double q, v;
};
template <class Input>
RunResult integrate(double t_n, double t_next, Input u) {
  const auto g = mt::gauss_legendre(12, t_n, t_next);
  RunResult r{0.0, 0.0};
  for (std::size_t i = 0; i < g.x.size(); ++i) {
    const double ui = u(g.x[i]);
    r.v += g.w[i] * ui;
    r.q += g.w[i] * (t_next - g.x[i]) * ui;
  }
  return r;
}

double f(double t) {
  return std::sin(3.0 * t) + std::exp(0.5 * t);
}

struct Accuracy {
  double pos, vel;  // |estimate/true − 1|
};

// Relative deviation of an estimator from the true local error of the continuing run.
Accuracy estimator_accuracy(mct::Estimator e, int kappa, double h) {
  const auto ratios = mt::random_ratios(8, 77);
  const double t_n = 0.9, t_next = t_n + h;
  const auto t = mt::grid_ending_at(t_n, h, ratios, static_cast<std::size_t>(kappa) + 2);
  const auto hist = mt::history_from(t, 1, [](std::size_t, double x) { return f(x); });
  auto run = [&](const mp::SupportPoints& sp) {
    return integrate(t_n, t_next, [&](double x) {
      double u;
      sp.evaluate(x, std::span<double>(&u, 1));
      return u;
    });
  };
  const RunResult exact = integrate(t_n, t_next, f);
  std::vector<double> u_pre(1), u_hat(1);
  mp::lagrange_prediction(hist, kappa, t_next, u_pre);
  const RunResult nominal = run(mp::step_polynomial(hist, kappa, t_next, u_pre));
  const mct::MilneRatios ratio = mct::milne_ratios(hist, kappa, t_next);
  std::vector<double> eps_pos(1), eps_vel(1);
  RunResult continuing = nominal;
  auto one = [](double x) { return std::vector<double>{x}; };
  if (e == mct::Estimator::kExLE) {
    const std::vector<std::size_t> ch = {0};
    const RunResult cmp = run(mp::extrapolation_comparison_polynomial(hist, kappa, t_next, ch));
    mct::local_extrapolation_error(one(nominal.q), one(cmp.q), eps_pos);
    mct::local_extrapolation_error(one(nominal.v), one(cmp.v), eps_vel);
  } else if (e == mct::Estimator::kExMD) {
    mp::milne_comparison_prediction(hist, kappa, t_next, u_hat);
    const RunResult cmp = run(mp::step_polynomial(hist, kappa, t_next, u_hat));
    mct::explicit_milne_error(one(nominal.q), one(cmp.q), ratio.pos, eps_pos);
    mct::explicit_milne_error(one(nominal.v), one(cmp.v), ratio.vel, eps_vel);
  } else {  // imMD: the corrector converged to the consistent u_{N+1} = f(T_{N+1})
    continuing = run(mp::step_polynomial(hist, kappa, t_next, one(f(t_next))));
    mct::implicit_milne_error(one(nominal.q), one(continuing.q), ratio.pos, eps_pos);
    mct::implicit_milne_error(one(nominal.v), one(continuing.v), ratio.vel, eps_vel);
  }
  return {std::abs(eps_pos[0] / std::abs(continuing.q - exact.q) - 1.0),
          std::abs(eps_vel[0] / std::abs(continuing.v - exact.v) - 1.0)};
}

}  // namespace

// seed 000 Eq. 3.5/3.12/3.18: each concept-1 estimate converges to the true local error of the
// continuing run (relative deviation O(H)) — on a non-uniform grid, which exercises the
// variable-step error constants, the comparison polynomials and the ε formulas together.
TEST(Estimators, ConceptOneEstimatesConvergeToTheTrueLocalError) {
  for (auto e : {mct::Estimator::kExLE, mct::Estimator::kExMD, mct::Estimator::kImMD}) {
    for (int kappa = 0; kappa <= 4; ++kappa) {
      // H where the O(H) deviation dominates rounding (κ = 4 meets rounding below H ≈ 0.003).
      const Accuracy coarse = estimator_accuracy(e, kappa, 0.02);
      const Accuracy fine = estimator_accuracy(e, kappa, 0.01);
      EXPECT_LT(fine.pos, 0.08) << mct::to_string(e) << " kappa " << kappa;
      EXPECT_LT(fine.vel, 0.08) << mct::to_string(e) << " kappa " << kappa;
      EXPECT_LT(fine.pos, 0.7 * coarse.pos) << mct::to_string(e) << " kappa " << kappa;
      EXPECT_LT(fine.vel, 0.7 * coarse.vel) << mct::to_string(e) << " kappa " << kappa;
    }
  }
}

// §5.3 (D-52): ρ = ‖u_{N+1} − u^pre‖/‖û^pre − u^pre‖ tends to 1 like O(H) where the coupling
// variables are smooth (û^pre − u^pre is the leading term of the predictor's miss), and is
// large where they jump within the step.
TEST(Estimators, PredictionRatioTendsToOneWhenSmoothAndIsLargeAtAJump) {
  const mct::ErrorTolerances tol = mct::ErrorTolerances::for_rtol(1e-4);
  const auto u = [](double t) { return std::vector<double>{std::sin(3.0 * t), std::exp(t)}; };
  for (int kappa = 0; kappa <= 3; ++kappa) {
    double previous = 0.0;
    for (const double h : {2e-2, 1e-2, 5e-3}) {
      mp::CouplingHistory hist(2);
      const double t0 = 0.3;
      for (int j = 0; j <= kappa + 1; ++j) hist.push(t0 + j * h, u(t0 + j * h));
      const double t1 = t0 + (kappa + 2) * h;
      std::vector<double> u_pre(2), u_hat(2);
      mp::lagrange_prediction(hist, kappa, t1, u_pre);
      mp::milne_comparison_prediction(hist, kappa, t1, u_hat);
      const double rho = mct::prediction_ratio(u_pre, u_hat, u(t1), tol);
      const double miss = std::abs(rho - 1.0);
      if (previous > 0.0) {
        EXPECT_LT(miss, 0.65 * previous) << "kappa " << kappa << " H " << h;
      }
      previous = miss;
      if (h == 5e-3) {
        EXPECT_LT(miss, 0.1) << "kappa " << kappa;
      }
      std::vector<double> jumped = u(t1);
      jumped[1] += 100.0 * (std::abs(u_hat[0] - u_pre[0]) + std::abs(u_hat[1] - u_pre[1]));
      EXPECT_GT(mct::prediction_ratio(u_pre, u_hat, jumped, tol), 50.0) << "kappa " << kappa;
    }
  }
  // No comparison difference: no ratio.
  const std::vector<double> same = {1.0, 2.0};
  EXPECT_TRUE(std::isnan(mct::prediction_ratio(same, same, std::vector<double>{1.5, 2.0}, tol)));
  EXPECT_THROW(mct::prediction_ratio(same, std::vector<double>{1.0}, same, tol),
               std::invalid_argument);
}

TEST(Estimators, RaiseForPredictionRatioScalesOnlyAboveTheLimit) {
  auto e = mct::ErrorEstimate::states(0.2, 0.4);
  EXPECT_EQ(mct::raise_for_prediction_ratio(e, 9.0, 10.0), 1.0);
  EXPECT_EQ(e.pos, 0.2);
  EXPECT_EQ(mct::raise_for_prediction_ratio(e, 50.0, 0.0), 1.0);  // limit 0: off
  EXPECT_EQ(mct::raise_for_prediction_ratio(e, std::nan(""), 10.0), 1.0);
  EXPECT_EQ(e.vel, 0.4);
  EXPECT_EQ(mct::raise_for_prediction_ratio(e, 50.0, 10.0), 5.0);
  EXPECT_DOUBLE_EQ(e.pos, 1.0);
  EXPECT_DOUBLE_EQ(e.vel, 2.0);
}
