// METHODS §7.3 S3 (seed 000 App. C, Figs. C.3–C.6, "classic"): the undamped (d = 0) column of
// the qualitative stability table for F/F and F/D, Jacobi and Gauss–Seidel, κ = 0, 1, 2, from the
// two-mass recurrence of the symmetric App. C model (m = c = 1). Gauss–Seidel as the seed defines
// it is the sequential end value (GaussSeidelEndValue::kSequential: each subsystem runs once);
// the converged end value the runtime uses by default is another method, stable at κ = 0 where
// the seed's is not, and this file shows both (docs/design/methods.md §3.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "macrostep/analysis/stability.hpp"

namespace macrostep::analysis {
namespace {

TwoMass undamped_symmetric() {
  return TwoMass{};  // m = c = 1, no dampers
}

Method s3_method(Decomposition d, Scheme scheme, GaussSeidelEndValue end_value, int kappa) {
  Method m;
  m.decomposition = d;
  m.scheme = scheme;
  m.end_value = end_value;
  m.order = kappa;
  return m;
}

// The seed's symbols for d = 0: "+" when the band of stable steps from ω̂ = 0.05 reaches at least
// ω̂ = 0.1, "−" when ρ > 1 + kStabilityTolerance at every ω̂ of [0.05, 3] (the S3 note: κ = 1 grows
// too weakly below 0.05 to classify), "?" otherwise. 60 log-spaced points.
std::string classify(const Method& method) {
  const TwoMass model = undamped_symmetric();
  const auto points = scan(model, method, 0.05, 3.0, 60);
  bool all_unstable = true;
  for (const ScanPoint& p : points) all_unstable = all_unstable && !p.stable();
  if (all_unstable) return "−";
  const StableBand band = stable_band(model, method, points);
  if (band.edge_h && *band.edge_h * model.omega1() >= 0.1) return "+";
  return "?";
}

struct Row {
  Decomposition decomposition;
  Scheme scheme;
  const char* seed[3];  // κ = 0, 1, 2 (Figs. C.3–C.6, d = 0)
};

constexpr Row kS3[] = {
    {Decomposition::kForceForce, Scheme::kJacobi, {"−", "−", "+"}},
    {Decomposition::kForceForce, Scheme::kGaussSeidel, {"−", "−", "+"}},
    {Decomposition::kForceDisplacement, Scheme::kJacobi, {"−", "−", "−"}},
    {Decomposition::kForceDisplacement, Scheme::kGaussSeidel, {"−", "−", "+"}},
};

// The whole d = 0 column with Gauss–Seidel as the seed defines it.
TEST(GaussSeidelS3, SequentialGaussSeidelHasTheSeedsUndampedClassification) {
  for (const Row& row : kS3) {
    for (int kappa = 0; kappa <= 2; ++kappa) {
      const Method m =
          s3_method(row.decomposition, row.scheme, GaussSeidelEndValue::kSequential, kappa);
      EXPECT_EQ(classify(m), row.seed[kappa]) << decomposition_name(row.decomposition) << " "
                                              << scheme_name(row.scheme) << " kappa " << kappa;
    }
  }
}

// The converged end value is another method: F/F κ = 0 is stable ("+", up to ω̂ ≈ 4) where the
// seed has "−"; the other F/F cells agree with the seed's symbols. F/D has no law that reads the
// later subsystem itself, so both end values give the same recurrence there.
TEST(GaussSeidelS3, ConvergedEndValueIsStableWhereTheSeedsSchemeIsNot) {
  const auto ff = [](GaussSeidelEndValue e, int kappa) {
    return s3_method(Decomposition::kForceForce, Scheme::kGaussSeidel, e, kappa);
  };
  EXPECT_EQ(classify(ff(GaussSeidelEndValue::kConverged, 0)), "+");
  EXPECT_EQ(classify(ff(GaussSeidelEndValue::kConverged, 1)), "−");
  EXPECT_EQ(classify(ff(GaussSeidelEndValue::kConverged, 2)), "+");
  for (int kappa = 0; kappa <= 2; ++kappa) {
    for (double w : {0.1, 0.7}) {
      const TwoMass model = undamped_symmetric();
      const Method conv = s3_method(Decomposition::kForceDisplacement, Scheme::kGaussSeidel,
                                    GaussSeidelEndValue::kConverged, kappa);
      const Method seq = s3_method(Decomposition::kForceDisplacement, Scheme::kGaussSeidel,
                                   GaussSeidelEndValue::kSequential, kappa);
      EXPECT_NEAR(spectral_radius(model, conv, w), spectral_radius(model, seq, w), 1e-12)
          << "F/D kappa " << kappa << " at " << w;
      // F/F: the two differ (not one method under two names).
      EXPECT_GT(std::abs(spectral_radius(model, ff(GaussSeidelEndValue::kConverged, kappa), w) -
                         spectral_radius(model, ff(GaussSeidelEndValue::kSequential, kappa), w)),
                1e-9)
          << "F/F kappa " << kappa << " at " << w;
    }
  }
}

// The sequential end value keeps the orders of the classic scheme (seed 000 Fig. C.2: local
// position κ+3, global κ+1): its extrapolated own states are O(H^{κ+1}) accurate, like the
// extrapolated coupling variables. Measured from the exact solution on the damped model.
TEST(GaussSeidelS3, SequentialEndValueKeepsTheGlobalOrder) {
  TwoMass model;
  model.d1 = model.d2 = model.dc = 0.1;
  const Matrix mono = monolithic_matrix(model);
  const std::vector<double> z0{1.0, 0.0, -0.5, 0.3};
  const auto exact = [&](double t) {
    const Matrix e = expm(t * mono);
    std::vector<double> z(4, 0.0);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) z[i] += e(i, j) * z0[j];
    return z;
  };
  for (int kappa = 0; kappa <= 2; ++kappa) {
    const Method m = s3_method(Decomposition::kForceForce, Scheme::kGaussSeidel,
                               GaussSeidelEndValue::kSequential, kappa);
    double err[2] = {0.0, 0.0};
    for (int k = 0; k < 2; ++k) {
      const double h = k == 0 ? 0.02 : 0.01;
      const Recurrence r = recurrence(model, m, h);
      ASSERT_EQ(r.state_points, static_cast<std::size_t>(kappa));
      // X at t = 0 from the exact past: z, u_{−j} = G z(−jH), z_{−j}.
      std::vector<double> x(r.m.rows(), 0.0);
      const std::size_t past = 4 + r.couplings * r.points;
      for (std::size_t j = 0; j < std::max(r.points, r.state_points + 1); ++j) {
        const auto zj = exact(-static_cast<double>(j) * h);
        if (j == 0) std::copy(zj.begin(), zj.end(), x.begin());
        if (j > 0 && j <= r.state_points)
          std::copy(zj.begin(), zj.end(), x.begin() + past + 4 * (j - 1));
        if (j < r.points) {
          for (std::size_t i = 0; i < 4; ++i) x[4 + j] += r.g(0, i) * zj[i];
        }
      }
      const int steps = static_cast<int>(std::lround(2.0 / h));
      for (int n = 0; n < steps; ++n) {
        std::vector<double> y(x.size(), 0.0);
        for (std::size_t i = 0; i < x.size(); ++i)
          for (std::size_t j = 0; j < x.size(); ++j) y[i] += r.m(i, j) * x[j];
        x = y;
      }
      const auto ref = exact(static_cast<double>(steps) * h);
      for (std::size_t i = 0; i < 4; ++i) err[k] = std::max(err[k], std::abs(x[i] - ref[i]));
    }
    EXPECT_NEAR(std::log2(err[0] / err[1]), kappa + 1, 0.15) << "kappa " << kappa;
  }
}

}  // namespace
}  // namespace macrostep::analysis
