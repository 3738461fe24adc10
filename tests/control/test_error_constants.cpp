// Error constants C^κ_pos, C^κ_vel (METHODS §5.2; seed 000 Eq. 3.11, 3.15, Table 3.1, App. A.1).
#include "macrostep/control/error_constants.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "control_support.hpp"

namespace mct = macrostep::control;
namespace mt = macrostep::testing;

// METHODS §5.2 constant-step table / seed 000 Table A.1, plus the κ = 6 values.
TEST(ErrorConstants, ConstantStepTableValues) {
  const double pos[] = {1.0 / 2,  1.0 / 6,         1.0 / 8,       19.0 / 180,
                        3.0 / 32, 863.0 / 10080.0, 275.0 / 3456.0};
  const double vel[] = {1.0,         1.0 / 2,    5.0 / 12,         3.0 / 8,
                        251.0 / 720, 95.0 / 288, 19087.0 / 60480.0};
  for (int k = 0; k <= 6; ++k) {
    const auto c = mct::constant_step_error_constants(k);
    EXPECT_NEAR(c.pos, pos[k], 1e-14) << "kappa " << k;
    EXPECT_NEAR(c.vel, vel[k], 1e-14) << "kappa " << k;
  }
}

// METHODS §5.2 ratio rows / seed 000 Table 3.1 (exMD) and the 1 − ratio rows (imMD).
TEST(ErrorConstants, ConstantStepRatiosTable31) {
  const double pos[] = {1.0 / 3, 3.0 / 4, 38.0 / 45, 135.0 / 152, 863.0 / 945, 9625.0 / 10356};
  const double vel[] = {1.0 / 2, 5.0 / 6, 9.0 / 10, 251.0 / 270, 475.0 / 502, 19087.0 / 19950};
  const double im_pos[] = {2.0 / 3, 1.0 / 4, 7.0 / 45, 17.0 / 152, 82.0 / 945, 731.0 / 10356};
  const double im_vel[] = {1.0 / 2, 1.0 / 6, 1.0 / 10, 19.0 / 270, 27.0 / 502, 863.0 / 19950};
  for (int k = 0; k <= 5; ++k) {
    const auto r = mct::constant_step_milne_ratios(k);
    EXPECT_NEAR(r.pos, pos[k], 1e-14) << "kappa " << k;
    EXPECT_NEAR(r.vel, vel[k], 1e-14) << "kappa " << k;
    EXPECT_NEAR(1.0 - r.pos, im_pos[k], 1e-14) << "kappa " << k;
    EXPECT_NEAR(1.0 - r.vel, im_vel[k], 1e-14) << "kappa " << k;
  }
}

// METHODS §5.2 check / seed 000 App. A.1: κ = 2 on variable steps,
// C_pos = 1/6 − 1/(12α_1), C_vel = 1/2 − 1/(6α_1).
TEST(ErrorConstants, KappaTwoVariableStepClosedForm) {
  for (double ratio : {0.3, 0.5, 0.8, 1.0, 1.7, 2.0, 5.0}) {
    const double alpha1 = 1.0 + ratio;  // (T_{N+1} − T_{N−1})/H with H_{N} = ratio·H
    const std::vector<double> alpha = {1.0, alpha1};
    const auto c = mct::error_constants(2, alpha);
    EXPECT_NEAR(c.pos, 1.0 / 6 - 1.0 / (12 * alpha1), 1e-15) << "alpha1 " << alpha1;
    EXPECT_NEAR(c.vel, 1.0 / 2 - 1.0 / (6 * alpha1), 1e-15) << "alpha1 " << alpha1;
  }
}

// The defining integrals (Eq. 3.11, 3.15) by Gauss–Legendre quadrature on random grids:
// C_vel = (1/H)∫L^κ dt, C_pos = (1/H²)∫(T_{N+1} − t) L^κ(t) dt, L^κ in its product form.
TEST(ErrorConstants, MatchTheDefiningIntegralsOnRandomGrids) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto ratios = mt::random_ratios(8, seed, 0.2, 5.0);
    const double t_n = 0.0, h = 0.01 * ratios[7];             // T_N = 0 keeps t − T_j exact-ish
    const auto t = mt::grid_ending_at(t_n, 0.01, ratios, 7);  // T_{N−6}..T_N
    const auto hist = mt::history_from(t, 1, [](std::size_t, double) { return 0.0; });
    const double t_next = t_n + h;
    const auto q = mt::gauss_legendre(8, t_n, t_next);
    for (int k = 0; k <= 6; ++k) {
      double iv = 0.0, ip = 0.0;
      for (std::size_t i = 0; i < q.x.size(); ++i) {
        double L = 1.0;
        for (int j = 0; j < k; ++j) {
          const double tj = hist.time_back(static_cast<std::size_t>(j));
          L *= (q.x[i] - tj) / (t_next - tj);
        }
        iv += q.w[i] * L;
        ip += q.w[i] * (t_next - q.x[i]) * L;
      }
      const auto c = mct::error_constants(hist, k, t_next);
      EXPECT_NEAR(c.vel, iv / h, 1e-13) << "seed " << seed << " kappa " << k;
      EXPECT_NEAR(c.pos, ip / (h * h), 1e-13) << "seed " << seed << " kappa " << k;
    }
    for (int k = 0; k <= 5; ++k) {
      const auto r = mct::milne_ratios(hist, k, t_next);
      const auto lo = mct::error_constants(hist, k, t_next);
      const auto hi = mct::error_constants(hist, k + 1, t_next);
      EXPECT_DOUBLE_EQ(r.pos, hi.pos / lo.pos);
      EXPECT_DOUBLE_EQ(r.vel, hi.vel / lo.vel);
    }
  }
}

// METHODS §5.2: the history-based constants on a uniform grid reduce to seed 000 Table 3.1.
TEST(ErrorConstants, UniformHistoryGivesTableValues) {
  std::vector<double> t(7);
  for (std::size_t i = 0; i < 7; ++i) t[i] = 0.25 * static_cast<double>(i);
  const auto hist = mt::history_from(t, 1, [](std::size_t, double) { return 0.0; });
  for (int k = 0; k <= 5; ++k) {
    const auto r = mct::milne_ratios(hist, k, 1.75);
    const auto ref = mct::constant_step_milne_ratios(k);
    EXPECT_NEAR(r.pos, ref.pos, 1e-14);
    EXPECT_NEAR(r.vel, ref.vel, 1e-14);
  }
}

// METHODS §5.2: κ ≤ 6, α_j > 0, C^{κ+1} needs the node T_{N−κ} (κ+1 points).
TEST(ErrorConstants, RejectsBadInput) {
  EXPECT_THROW(mct::constant_step_error_constants(7), std::invalid_argument);
  EXPECT_THROW(mct::error_constants(2, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(mct::error_constants(2, std::vector<double>{1.0, -1.0}), std::invalid_argument);
  const auto hist =
      mt::history_from(std::vector<double>{0.0, 1.0}, 1, [](std::size_t, double) { return 0.0; });
  EXPECT_THROW(mct::milne_ratios(hist, 2, 2.0), std::invalid_argument);     // needs 3 points
  EXPECT_THROW(mct::error_constants(hist, 1, 1.0), std::invalid_argument);  // T_{N+1} = T_N
}
