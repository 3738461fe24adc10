// Dense linear algebra of the stability analysis (runtime/analysis/dense.hpp) against closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "macrostep/analysis/dense.hpp"

namespace macrostep::analysis {
namespace {

TEST(Dense, ExpmOfARotationGeneratorIsTheRotation) {
  for (double t : {1e-3, 0.7, 25.0}) {
    Matrix a(2, 2);
    a(0, 1) = t;
    a(1, 0) = -t;
    const Matrix e = expm(a);
    EXPECT_NEAR(e(0, 0), std::cos(t), 1e-13);
    EXPECT_NEAR(e(0, 1), std::sin(t), 1e-13);
    EXPECT_NEAR(e(1, 0), -std::sin(t), 1e-13);
    EXPECT_NEAR(e(1, 1), std::cos(t), 1e-13);
  }
}

TEST(Dense, ExpmOfANilpotentShiftIsTheTaylorPolynomial) {
  Matrix a(3, 3);
  a(0, 1) = 2.0;
  a(1, 2) = 2.0;
  const Matrix e = expm(a);  // I + A + A²/2
  EXPECT_DOUBLE_EQ(e(0, 0), 1.0);
  EXPECT_NEAR(e(0, 1), 2.0, 1e-14);
  EXPECT_NEAR(e(0, 2), 2.0, 1e-14);
  EXPECT_NEAR(e(1, 0), 0.0, 1e-14);
}

TEST(Dense, SolveInvertsAPermutedSystem) {
  Matrix a(3, 3), b(3, 1);
  const double v[3][3] = {{0, 2, 1}, {1, 1, 0}, {3, 0, 1}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) a(i, j) = v[i][j];
  b(0, 0) = 4;  // x = (1, 1, 2)
  b(1, 0) = 2;
  b(2, 0) = 5;
  const Matrix x = solve(a, b);
  EXPECT_NEAR(x(0, 0), 1.0, 1e-14);
  EXPECT_NEAR(x(1, 0), 1.0, 1e-14);
  EXPECT_NEAR(x(2, 0), 2.0, 1e-14);
}

// The companion matrix of (z − 0.5)(z + 2)(z² − 2 r cos φ z + r²) has exactly these roots.
TEST(Dense, EigenvaluesOfACompanionMatrixAreItsPolynomialsRoots) {
  const double r = 1.0 + 1e-9, phi = 0.3;
  // Coefficients of z⁴ + c3 z³ + c2 z² + c1 z + c0 by multiplying out.
  const double p = -2.0 * r * std::cos(phi), q = r * r;  // z² + p z + q
  const double s = 1.5, t = -1.0;                        // (z − 0.5)(z + 2) = z² + 1.5 z − 1
  const double c3 = p + s, c2 = q + p * s + t, c1 = q * s + p * t, c0 = q * t;
  Matrix a(4, 4);
  a(0, 0) = -c3;
  a(0, 1) = -c2;
  a(0, 2) = -c1;
  a(0, 3) = -c0;
  a(1, 0) = a(2, 1) = a(3, 2) = 1.0;
  auto ev = eigenvalues(a);
  std::sort(ev.begin(), ev.end(), [](auto x, auto y) { return std::abs(x) < std::abs(y); });
  EXPECT_NEAR(std::abs(ev[0]), 0.5, 1e-13);
  EXPECT_NEAR(std::abs(ev[1]), r, 1e-13);
  EXPECT_NEAR(std::abs(ev[2]), r, 1e-13);
  EXPECT_NEAR(std::abs(std::arg(ev[1])), phi, 1e-12);
  EXPECT_NEAR(std::abs(ev[3]), 2.0, 1e-13);
  EXPECT_NEAR(spectral_radius(a), 2.0, 1e-13);
}

TEST(Dense, EigenvaluesOfATriangularMatrixAreItsDiagonal) {
  Matrix a(5, 5);
  for (std::size_t i = 0; i < 5; ++i) {
    a(i, i) = static_cast<double>(i) - 2.5;
    for (std::size_t j = i + 1; j < 5; ++j) a(i, j) = 1e3 * static_cast<double>(i + j);
  }
  auto ev = eigenvalues(a);
  std::sort(ev.begin(), ev.end(), [](auto x, auto y) { return x.real() < y.real(); });
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(ev[i].real(), static_cast<double>(i) - 2.5, 1e-10);
    EXPECT_NEAR(ev[i].imag(), 0.0, 1e-10);
  }
}

}  // namespace
}  // namespace macrostep::analysis
