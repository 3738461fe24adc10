// The Newton corrector's parts (runtime/corrector): the convergence test of METHODS.md §4.3 with
// D-16, the sparse interface Jacobian J = I − (∂φ/∂y)(∂y/∂s) (§4.1, D-12; seed 000 Eq. 2.29)
// against a hand-assembled matrix and an independent tridiagonal solve, finite-difference
// sensitivities from perturbed runs (§4.2; seed 000 §2.4.2) against the closed-form response of a
// linear oscillator, and the sap sensitivities (§4.5; seed 000 App. A) against perturbed runs on
// free bodies, where the first series term is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../support/test_chain.hpp"
#include "macrostep/control/error_constants.hpp"
#include "macrostep/corrector/convergence.hpp"
#include "macrostep/corrector/interface_jacobian.hpp"
#include "macrostep/corrector/sap.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/system/chain_system.hpp"
#include "star_system.hpp"

namespace macrostep {
namespace {

using corrector::ConvergenceTest;
using corrector::ConvergenceVerdict;

// D-16: no verdict from the first difference; R^j/(1 − R^j)·‖δ^j‖ < τ from the second on.
TEST(ConvergenceTest, StartsAtTheSecondDifferenceAndUsesTheRateEstimate) {
  ConvergenceTest t(0.33, 0.9);
  EXPECT_EQ(t.add(1e-3), ConvergenceVerdict::kContinue);  // tiny, but R^1 is undefined
  // R = 0.5: 0.5/0.5 * 0.5e-3 < 0.33 → converged
  EXPECT_EQ(t.add(0.5e-3), ConvergenceVerdict::kConverged);
  EXPECT_DOUBLE_EQ(t.rate(), 0.5);
  t.reset();
  EXPECT_EQ(t.add(10.0), ConvergenceVerdict::kContinue);
  EXPECT_EQ(t.add(5.0), ConvergenceVerdict::kContinue);    // R = 0.5: 1·5 ≥ 0.33
  EXPECT_EQ(t.add(0.25), ConvergenceVerdict::kConverged);  // R = 0.05: 0.0526·0.25 < 0.33
}

TEST(ConvergenceTest, DivergenceAtTheThresholdOrNonFinite) {
  ConvergenceTest t(0.33, 0.9);
  t.add(1.0);
  EXPECT_EQ(t.add(0.9), ConvergenceVerdict::kDiverged);  // R = 0.9 (D-16)
  t.reset();
  t.add(1.0);
  EXPECT_EQ(t.add(0.89), ConvergenceVerdict::kContinue);
  t.reset();
  EXPECT_EQ(t.add(std::nan("")), ConvergenceVerdict::kDiverged);
  t.reset();
  t.add(1.0);
  EXPECT_EQ(t.add(0.0), ConvergenceVerdict::kConverged);  // δ = 0
  // Rounding-level differences (a system at rest): R near 1 is noise there, not divergence.
  t.reset();
  t.add(2.7e-21);
  EXPECT_EQ(t.add(2.69e-21), ConvergenceVerdict::kConverged);
  t.reset();
  t.add(1e-6);
  EXPECT_EQ(t.add(0.99e-6), ConvergenceVerdict::kDiverged);  // 3e-6 τ: not rounding
  EXPECT_THROW(ConvergenceTest(0.0, 0.9), std::invalid_argument);
  EXPECT_THROW(ConvergenceTest(0.33, 1.0), std::invalid_argument);
}

// D-50: the iterate already integrated, s^j, is accepted when ‖δ^{j+1}‖/(1 − R) < τ: the same
// geometric tail as §4.3, one iterate earlier, so it is stricter by 1/R.
TEST(ConvergenceTest, IntegratedIterateNeedsItsWholeTailBelowTau) {
  using corrector::integrated_iterate_converged;
  EXPECT_FALSE(integrated_iterate_converged(0.0, 1e-3, 0.33, 0.9));  // no δ^j yet
  EXPECT_TRUE(integrated_iterate_converged(1.0, 0.2, 0.33, 0.9));    // R 0.2: 0.25 < 0.33
  EXPECT_FALSE(integrated_iterate_converged(1.0, 0.3, 0.33, 0.9));   // R 0.3: 0.43 ≥ 0.33
  EXPECT_TRUE(integrated_iterate_converged(10.0, 0.2, 0.33, 0.9));   // R 0.02: 0.204 < 0.33
  EXPECT_FALSE(integrated_iterate_converged(10.0, 0.4, 0.33, 0.9));  // 0.417 ≥ 0.33
  // §4.3 would accept s^{j+1} here (R/(1 − R)·0.4 = 0.017 < τ), D-50 not s^j: one more pass.
  ConvergenceTest t(0.33, 0.9);
  t.add(10.0);
  EXPECT_EQ(t.add(0.4), ConvergenceVerdict::kConverged);
  // Divergence, non-finite and rounding-level differences as in the test of §4.3.
  EXPECT_FALSE(integrated_iterate_converged(1e-3, 0.95e-3, 0.33, 0.9));
  EXPECT_FALSE(integrated_iterate_converged(1.0, std::nan(""), 0.33, 0.9));
  EXPECT_TRUE(integrated_iterate_converged(2.7e-21, 2.69e-21, 0.33, 0.9));
}

library::ChainParameters linear_chain(std::size_t n, double c, double d) {
  library::ChainParameters p;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mass(0.5, 2.0);
  for (std::size_t i = 0; i < n; ++i) p.mass.push_back(mass(rng));
  for (std::size_t i = 0; i <= n; ++i) p.element.push_back({c * (1.0 + 0.1 * i), d, 0, 0, 3, 3});
  p.forces.resize(n);
  p.x0.assign(n, 0.0);
  p.v0.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) p.x0[i] = 1e-3 * static_cast<double>(i % 3);
  return p;
}

// Random sensitivities and outputs for a system; the dense J assembled by hand from the laws'
// ∂φ/∂y: J_ik = δ_ik − Σ_r ∂φ_i/∂y_r Σ_{c: u_k feeds input c of r's subsystem} S(r, c).
std::vector<double> hand_assembled(const system::CoupledSystem& sys,
                                   const std::vector<std::vector<double>>& y,
                                   const corrector::InputSensitivities& s) {
  const std::size_t n = sys.coupling_count();
  std::vector<double> j(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) j[i * n + i] = 1.0;
  for (std::size_t k = 0; k < sys.law_count(); ++k) {
    const auto& law = sys.law(k);
    const auto reads = law.reads();
    std::vector<double> dphi(law.write_count() * reads.size());
    sys.coupling_jacobian(k, y, dphi);
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      for (std::size_t r = 0; r < reads.size(); ++r) {
        const auto in = sys.feed_channels(reads[r].subsystem);
        for (std::size_t c = 0; c < in.size(); ++c) {
          j[(sys.law_offset(k) + w) * n + in[c]] -=
              dphi[w * reads.size() + r] * s.at(reads[r].subsystem, reads[r].output, c);
        }
      }
    }
  }
  return j;
}

void randomize(const system::CoupledSystem& sys, std::vector<std::vector<double>>& y,
               corrector::InputSensitivities& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  y.assign(sys.subsystem_count(), {});
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    y[i].resize(sys.subsystem(i).output_size());
    for (double& v : y[i]) v = 1e-3 * u(rng);
    for (double& v : s.block(i)) v = 1e-7 * u(rng);
  }
}

// Seed 000 Eq. 2.29: the chain's J is tridiagonal; the KLU solve agrees with the Thomas
// algorithm on the same matrix (D-11).
TEST(InterfaceJacobian, ChainIsTridiagonalAndKluAgreesWithThomas) {
  const auto p = linear_chain(12, 1e6, 10.0);
  const auto sys = system::make_chain_system(p, library::equal_partition(12, 6));
  corrector::InterfaceJacobian jac(sys);
  const std::size_t n = sys.coupling_count();
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(jac.nonzeros(), 3 * n - 2);
  corrector::InputSensitivities s(sys);
  std::vector<std::vector<double>> y;
  randomize(sys, y, s, 3);
  ASSERT_TRUE(jac.assemble(y, s));
  const auto dense = jac.dense();
  const auto expected = hand_assembled(sys, y, s);
  for (std::size_t k = 0; k < n * n; ++k) {
    EXPECT_DOUBLE_EQ(dense[k], expected[k]) << "entry " << k;
    const std::size_t r = k / n, c = k % n;
    if (r > c + 1 || c > r + 1) {
      EXPECT_EQ(dense[k], 0.0);
    }
  }
  std::vector<double> rhs{1.0, -2.0, 0.5, 3.0, -1.0}, x = rhs;
  jac.solve(x);
  // Thomas algorithm on the dense copy.
  std::vector<double> a(n), b(n), c(n), d = rhs;
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = dense[i * n + i];
    if (i > 0) a[i] = dense[i * n + i - 1];
    if (i + 1 < n) c[i] = dense[i * n + i + 1];
  }
  for (std::size_t i = 1; i < n; ++i) {
    const double m = a[i] / b[i - 1];
    b[i] -= m * c[i - 1];
    d[i] -= m * d[i - 1];
  }
  std::vector<double> t(n);
  t[n - 1] = d[n - 1] / b[n - 1];
  for (std::size_t i = n - 1; i-- > 0;) t[i] = (d[i] - c[i] * t[i + 1]) / b[i];
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], t[i], 1e-12 * std::abs(t[i]) + 1e-15);
}

// A law that reads every subsystem (the star's node) gives a full J; the solve's residual is
// at round-off.
TEST(InterfaceJacobian, StarNodeGivesAFullMatrixAndASolveWithRoundOffResidual) {
  const auto sys = testing::make_star_system({});
  corrector::InterfaceJacobian jac(sys);
  EXPECT_EQ(jac.nonzeros(), 9u);
  corrector::InputSensitivities s(sys);
  std::vector<std::vector<double>> y;
  randomize(sys, y, s, 9);
  for (std::size_t i = 0; i < 3; ++i) s.at(i, 0, 0) = 3e-3 * (1.0 + 0.1 * i);  // k·S ~ 0.3
  ASSERT_TRUE(jac.assemble(y, s));
  const auto dense = jac.dense();
  const auto expected = hand_assembled(sys, y, s);
  for (std::size_t k = 0; k < 9; ++k) EXPECT_DOUBLE_EQ(dense[k], expected[k]);
  const std::vector<double> rhs{0.3, -1.0, 2.0};
  std::vector<double> x = rhs;
  jac.solve(x);
  for (std::size_t i = 0; i < 3; ++i) {
    double r = -rhs[i];
    for (std::size_t k = 0; k < 3; ++k) r += dense[i * 3 + k] * x[k];
    EXPECT_NEAR(r, 0.0, 1e-13);
  }
}

TEST(InterfaceJacobian, SingularMatrixIsReported) {
  const auto sys = testing::make_star_system({});
  corrector::InterfaceJacobian jac(sys);
  corrector::InputSensitivities s(sys);
  std::vector<std::vector<double>> y(3, std::vector<double>(2, 0.0));
  // ∂φ_i/∂x_j = k(1/3 − δ_ij) has the eigenvalues 0 and −1 (twice); with ∂x_i/∂s_i = σ,
  // J = I − kσ(1/3·ones − I) has 1 and 1 + kσ: singular for σ = −1/k (k = 100).
  for (std::size_t i = 0; i < 3; ++i) s.at(i, 0, 0) = -1.0 / 100.0;
  EXPECT_FALSE(jac.assemble(y, s));
  std::vector<double> rhs(3, 1.0);
  EXPECT_THROW(jac.solve(rhs), std::logic_error);
}

// Seed 000 §2.4.2 / METHODS §4.2: forward differences of a linear two-mass oscillator with a
// constant input (κ = 0) against the closed-form response x(H) = λ/c (1 − cos ωH) + ...:
// ∂x/∂λ = ±(1 − cos ωH)/c, ∂v/∂λ = ±sin(ωH)/(m ω); exact up to the solver's error.
TEST(FiniteDifferenceSensitivities, MatchTheClosedFormResponseOfALinearOscillator) {
  const auto p = testing::linear_two_mass();
  const auto sys = system::make_chain_system(p, {0, 1, 2});
  const auto u0 = sys.initial_couplings();
  executors::InProcessOptions io;
  io.solver = testing::reference_solver();
  io.rollback = true;
  executors::InProcessExecutor ex(sys, u0, io);
  polynomials::CouplingHistory hist(1);
  hist.push(0.0, u0);
  const double h = 2e-3, lambda = u0[0] + 3.0, delta = 0.1;
  const std::vector<double> s_end{lambda};
  std::vector<executors::SubsystemCommand> cmds(2);
  for (std::size_t i = 0; i < 2; ++i) {
    cmds[i].nominal = polynomials::step_polynomial(hist, 0, h, s_end, std::vector<std::size_t>{0});
    cmds[i].extra.push_back(runner::ExtraRun::perturbed(0, lambda + delta));
  }
  executors::PassOutcome out;
  ex.step(h, cmds, out);
  ASSERT_TRUE(out.ok) << out.error;
  corrector::InputSensitivities s(sys);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<std::vector<double>> pert{out.subsystems[i].extra[0].outputs};
    s.set_forward_difference(i, out.subsystems[i].nominal.outputs, pert,
                             std::vector<double>{delta});
  }
  // Body 1: m1 x'' = −c1 x + λ; body 2: m2 x'' = −λ − c3 x (seed 000 Eq. 2.16).
  const double w1 = std::sqrt(1e4 / 1.0), w2 = std::sqrt(2e4 / 2.0);
  const double dx1 = (1.0 - std::cos(w1 * h)) / 1e4, dv1 = std::sin(w1 * h) / (1.0 * w1);
  const double dx2 = -(1.0 - std::cos(w2 * h)) / 2e4, dv2 = -std::sin(w2 * h) / (2.0 * w2);
  // Outputs [x_first, x_last, v_first, v_last]; one body each.
  EXPECT_NEAR(s.at(0, 1, 0), dx1, 1e-6 * std::abs(dx1));
  EXPECT_NEAR(s.at(0, 3, 0), dv1, 1e-6 * std::abs(dv1));
  EXPECT_NEAR(s.at(1, 0, 0), dx2, 1e-6 * std::abs(dx2));
  EXPECT_NEAR(s.at(1, 2, 0), dv2, 1e-6 * std::abs(dv2));
}

// Seed 000 App. A (Eq. A.1-A.5, D-19): for a free body the sensitivity ODE is x_s'' = ℓ(t)/m,
// so the first series term C^κ_pos H²/m, C^κ_vel H/m is exact, also with the variable-step
// constants of a non-uniform history at κ = 2. The sap sensitivities equal perturbed runs.
TEST(SapSensitivities, AreExactForFreeBodiesOnANonUniformGrid) {
  testing::Star star;
  const auto sys = testing::make_star_system(star);
  const auto u0 = sys.initial_couplings();
  executors::InProcessOptions io;
  io.solver = testing::reference_solver();
  io.rollback = true;
  executors::InProcessExecutor ex(sys, u0, io);
  polynomials::CouplingHistory hist(3);
  // Earlier macro points (T_{N-2}, T_{N-1}) before t0 = 0: only the polynomial uses them.
  hist.push(-2.2e-3, std::vector<double>{u0[0] * 0.8, u0[1] * 1.1, u0[2] * 0.9});
  hist.push(-0.7e-3, std::vector<double>{u0[0] * 0.9, u0[1] * 1.05, u0[2] * 0.95});
  hist.push(0.0, u0);
  const int kappa = 2;
  const double t1 = 1.3e-3, delta = 1e-2;
  std::vector<double> s_end(u0);
  for (double& v : s_end) v += 0.5;
  std::vector<executors::SubsystemCommand> cmds(3);
  for (std::size_t i = 0; i < 3; ++i) {
    cmds[i].nominal =
        polynomials::step_polynomial(hist, kappa, t1, s_end, std::vector<std::size_t>{i});
    cmds[i].extra.push_back(runner::ExtraRun::perturbed(0, s_end[i] + delta));
  }
  executors::PassOutcome out;
  ex.step(t1, cmds, out);
  ASSERT_TRUE(out.ok) << out.error;
  corrector::InputSensitivities fd(sys), sap(sys);
  for (std::size_t i = 0; i < 3; ++i) {
    const std::vector<std::vector<double>> pert{out.subsystems[i].extra[0].outputs};
    fd.set_forward_difference(i, out.subsystems[i].nominal.outputs, pert,
                              std::vector<double>{delta});
  }
  corrector::SapSensitivities(sys).fill(control::error_constants(hist, kappa, t1), t1, sap);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t o = 0; o < 2; ++o) {
      EXPECT_NEAR(sap.at(i, o, 0), fd.at(i, o, 0), 1e-6 * std::abs(fd.at(i, o, 0)))
          << "body " << i + 1 << " output " << o;
    }
  }
}

// K-A0 (seed 000 App. A, Table A.1; METHODS §4.5 "Chain"): at constant H the chain's sap
// entries are k_x(κ) H²/m and k_v(κ) H/m with the Table A.1 coefficients, + for the left body of
// a cut (^L x_n, receives +λ_L) and − for the right one (^{L+1}x_1), zero across a subsystem.
TEST(SapSensitivities, ChainEntriesAreTheTableA1CoefficientsAtConstantSteps) {
  const double kx[] = {1.0 / 2, 1.0 / 6, 1.0 / 8, 19.0 / 180, 3.0 / 32, 863.0 / 10080};
  const double kv[] = {1.0, 1.0 / 2, 5.0 / 12, 3.0 / 8, 251.0 / 720, 95.0 / 288};
  const auto p = linear_chain(6, 1e6, 1.0);
  const auto sys = system::make_chain_system(p, {0, 2, 4, 6});
  const corrector::SapSensitivities sap(sys);
  const double h = 1e-4;
  for (int kappa = 0; kappa <= 5; ++kappa) {
    corrector::InputSensitivities s(sys);
    sap.fill(control::constant_step_error_constants(kappa), h, s);
    const auto k = static_cast<std::size_t>(kappa);
    // Subsystem 2 (masses 3, 4): input 0 = λ_1 on body 3 (−), input 1 = λ_2 on body 4 (+).
    EXPECT_NEAR(s.at(1, 0, 0), -kx[k] * h * h / p.mass[2], 1e-15 * h * h);
    EXPECT_NEAR(s.at(1, 2, 0), -kv[k] * h / p.mass[2], 1e-15 * h);
    EXPECT_NEAR(s.at(1, 1, 1), kx[k] * h * h / p.mass[3], 1e-15 * h * h);
    EXPECT_NEAR(s.at(1, 3, 1), kv[k] * h / p.mass[3], 1e-15 * h);
    EXPECT_EQ(s.at(1, 0, 1), 0.0);  // n_K,L > 1: no cross terms
    EXPECT_EQ(s.at(1, 1, 0), 0.0);
  }
}

}  // namespace
}  // namespace macrostep
