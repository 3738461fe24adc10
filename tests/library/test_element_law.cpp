// Element law and external forces of the oscillator chain (seed 000 Eq. 2.9-2.14,
// spec/MODELS.md §1.2-1.3).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"

namespace {

using macrostep::library::ContactForce;
using macrostep::library::ElementLaw;
using macrostep::library::HarmonicForce;
using macrostep::library::ImpulseForce;
using macrostep::library::MassForces;
using macrostep::library::ModifiedSineForce;

double central(auto&& f, double x, double h) {
  return (f(x + h) - f(x - h)) / (2.0 * h);
}

// Reference form of seed 000 Eq. 2.9 written with std::pow for every exponent.
double reference_force(const ElementLaw& e, double dx, double dv) {
  auto sp = [](double a, double p) { return (a < 0 ? -1.0 : 1.0) * std::pow(std::fabs(a), p); };
  return e.c * dx + e.d * dv + e.C * sp(dx, e.ex) + e.D * sp(dv, e.ev);
}

std::vector<ElementLaw> coefficient_sets() {
  return {
      {1.0e3, 2.0, 0.0, 0.0, 3.0, 3.0},    // linear
      {1.0e3, 2.0, 5.0e3, 7.0, 3.0, 3.0},  // cubic (Eq. 2.10)
      {1.0e3, 1.0, 4.0e4, 3.0, 6.0, 3.0},  // K-5.1: ex = 6
      {1.0e2, 0.0, 1.0e5, 5.0, 7.0, 3.0},  // K-5.2-M2: ex = 7
      {5.0e2, 3.0, 2.0e3, 4.0, 1.0, 2.0},  // exponents 1 and 2 (even: sign must be kept)
      {0.0, 0.0, 1.0e3, 2.0, 4.5, 5.0},    // non-integer exponent
  };
}

// seed 000 Eq. 2.9: force matches the formula; stiffness and damping are its partial
// derivatives (central finite differences), for positive, negative and zero arguments.
TEST(ElementLaw, ForceAndDerivativesMatchFiniteDifferences) {
  const std::vector<double> args = {0.7, -0.7, 0.31, -1.3, 0.0, 1e-3, -2e-3};
  for (const ElementLaw& e : coefficient_sets()) {
    for (double dx : args) {
      for (double dv : args) {
        const double f = e.force(dx, dv);
        ASSERT_TRUE(std::isfinite(f));
        EXPECT_NEAR(f, reference_force(e, dx, dv), 1e-13 * (1.0 + std::fabs(f)));
        const double h = 1e-6;
        const double k_fd = central([&](double a) { return e.force(a, dv); }, dx, h);
        const double d_fd = central([&](double a) { return e.force(dx, a); }, dv, h);
        const double k = e.stiffness(dx), d = e.damping(dv);
        ASSERT_TRUE(std::isfinite(k) && std::isfinite(d));
        // Truncation O(h^2) relative, rounding about eps * |f| / h.
        EXPECT_NEAR(k, k_fd, 1e-5 * (1.0 + std::fabs(k)) + 1e-9 * std::fabs(f))
            << "ex=" << e.ex << " dx=" << dx;
        EXPECT_NEAR(d, d_fd, 1e-5 * (1.0 + std::fabs(d)) + 1e-9 * std::fabs(f))
            << "ev=" << e.ev << " dv=" << dv;
      }
    }
  }
}

// seed 000 Eq. 2.9 at dx = dv = 0: no NaN, zero force, derivative c (+ C for ex = 1).
TEST(ElementLaw, ZeroArgumentIsFinite) {
  for (const ElementLaw& e : coefficient_sets()) {
    EXPECT_EQ(e.force(0.0, 0.0), 0.0);
    EXPECT_DOUBLE_EQ(e.stiffness(0.0), e.c + (e.ex == 1.0 ? e.C : 0.0));
    EXPECT_DOUBLE_EQ(e.damping(0.0), e.d + (e.ev == 1.0 ? e.D : 0.0));
  }
}

// seed 000 Eq. 2.9: the law is odd in each argument (sgn(.)|.|^e).
TEST(ElementLaw, OddSymmetry) {
  for (const ElementLaw& e : coefficient_sets()) {
    EXPECT_DOUBLE_EQ(e.force(-0.4, -0.9), -e.force(0.4, 0.9));
    EXPECT_DOUBLE_EQ(e.stiffness(-0.4), e.stiffness(0.4));
  }
}

// MODELS.md §1.4: a free end is the zero element.
TEST(ElementLaw, ZeroElement) {
  ElementLaw e;
  EXPECT_TRUE(e.is_zero());
  EXPECT_EQ(e.force(1.0, 2.0), 0.0);
  EXPECT_EQ(e.stiffness(1.0), 0.0);
  e.d = 1.0;
  EXPECT_FALSE(e.is_zero());
}

// seed 000 Eq. 2.11-2.14: total force is the sum of the four laws; dforce_dx matches FD
// (only contact depends on x).
TEST(MassForces, ValueAndDerivativeMatchFiniteDifferences) {
  MassForces f;
  f.harmonic.push_back({5.0, 3.0, 0.2});
  f.harmonic.push_back({-2.0, 7.0, 0.0});
  f.contact.push_back({-1.0e-2, 20.0});
  f.contact.push_back({-3.0e-3, 5.0});
  f.impulse.push_back({10.0, 0.5, 0.2, 0.01});
  f.modified_sine.push_back({4.0, 2.0, 0.1, 95.0});
  for (double t : {0.0, 0.3, 0.55, 1.7}) {
    for (double x : {-0.3, 0.0, 0.05, 0.2}) {
      const double expected =
          5.0 * std::sin(3.0 * t + 0.2) - 2.0 * std::sin(7.0 * t) + -1.0e-2 * std::exp(20.0 * x) -
          3.0e-3 * std::exp(5.0 * x) +
          10.0 * 0.5 * (std::tanh((t - 0.5) / 0.01) - std::tanh((t - 0.7) / 0.01)) +
          4.0 * std::pow(std::sin(2.0 * t + 0.1), 95.0);
      EXPECT_NEAR(f.force(t, x), expected, 1e-12 * (1.0 + std::fabs(expected)));
      const double fd = central([&](double a) { return f.force(t, a); }, x, 1e-6);
      EXPECT_NEAR(f.dforce_dx(t, x), fd, 1e-6 * (1.0 + std::fabs(fd)));
    }
  }
}

// MassForces::empty() and an empty set contribute nothing.
TEST(MassForces, EmptyIsZero) {
  MassForces f;
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.force(1.0, 2.0), 0.0);
  EXPECT_EQ(f.dforce_dx(1.0, 2.0), 0.0);
  f.impulse.push_back({});
  EXPECT_FALSE(f.empty());
}

// seed 000 Eq. 2.13: plateau value dF for the pulse duration, half value at the edges,
// zero far outside.
TEST(MassForces, ImpulsePlateauAndEdges) {
  MassForces f;
  const double amp = -5.0e5, start = 5.0e-7, duration = 5.0e-5, edge = 1.0e-7;  // K-A1
  f.impulse.push_back({amp, start, duration, edge});
  EXPECT_NEAR(f.force(start + 0.5 * duration, 0.0), amp, 1e-9 * std::fabs(amp));
  EXPECT_NEAR(f.force(start, 0.0), 0.5 * amp, 1e-9 * std::fabs(amp));
  EXPECT_NEAR(f.force(start + duration, 0.0), 0.5 * amp, 1e-9 * std::fabs(amp));
  EXPECT_NEAR(f.force(start - 50 * edge, 0.0), 0.0, 1e-9 * std::fabs(amp));
  EXPECT_NEAR(f.force(start + duration + 50 * edge, 0.0), 0.0, 1e-9 * std::fabs(amp));
  EXPECT_EQ(f.dforce_dx(start, 0.0), 0.0);
}

// seed 000 Eq. 2.14: sin^95 keeps the sign of the sine (one positive and one negative spike
// per period) and equals the plain power, as sin^2 does.
TEST(MassForces, ModifiedSinePreservesSign) {
  MassForces f;
  f.modified_sine.push_back({2.0, 1.0, 0.0, 95.0});
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(f.force(0.5 * pi, 0.0), 2.0, 1e-12);
  EXPECT_NEAR(f.force(1.5 * pi, 0.0), -2.0, 1e-12);
  for (double t : {0.3, 1.2, 2.0, 3.5, 4.4, 5.9}) {
    const double s = std::sin(t);
    const double v = f.force(t, 0.0);
    EXPECT_EQ(std::signbit(v), std::signbit(s)) << t;
    EXPECT_NEAR(v, 2.0 * std::pow(s, 95.0), 1e-14 * (1.0 + std::fabs(v)));
  }
  // An even exponent is the power itself: one sign whatever the sine's.
  MassForces even;
  even.modified_sine.push_back({2.0, 1.0, 0.0, 2.0});
  for (double t : {0.3, 2.0, 3.5, 4.4, 5.9}) {
    EXPECT_NEAR(even.force(t, 0.0), 2.0 * std::sin(t) * std::sin(t), 1e-15) << t;
  }
  even.modified_sine.front().exponent = 96.0;
  EXPECT_NEAR(even.force(4.0, 0.0), 2.0 * std::pow(std::sin(4.0), 96.0), 1e-15);
  EXPECT_GT(even.force(4.0, 0.0), 0.0);
  // A non-integer exponent still preserves the sign (sgn(s)|s|^A).
  MassForces g;
  g.modified_sine.push_back({1.0, 1.0, 0.0, 2.5});
  EXPECT_LT(g.force(4.0, 0.0), 0.0);
  EXPECT_NEAR(g.force(4.0, 0.0), -std::pow(std::fabs(std::sin(4.0)), 2.5), 1e-15);
}

// MODELS.md §1.3 [SI]: the contact exponent is clamped at 700, so deep penetration in a Newton
// iterate gives a finite force; the derivative is that of the clamped function.
TEST(MassForces, ContactClampDoesNotOverflow) {
  MassForces f;
  f.contact.push_back({-1.0e-2, 1.0e7});  // K-4.5 contact
  const double deep = 1.0e-4;             // B_C * x = 1000
  const double v = f.force(0.0, deep);
  EXPECT_TRUE(std::isfinite(v));
  EXPECT_DOUBLE_EQ(v, -1.0e-2 * std::exp(700.0));
  EXPECT_EQ(f.dforce_dx(0.0, deep), 0.0);
  EXPECT_TRUE(std::isfinite(f.force(0.0, 1.0e300)));
  // Below the clamp: A_C * B_C * exp(B_C x).
  const double x = 1.0e-6;
  EXPECT_NEAR(f.dforce_dx(0.0, x), -1.0e-2 * 1.0e7 * std::exp(10.0), 1e-6);
  // Outside the wall the force is tiny and pushes back (A_C < 0).
  EXPECT_LT(f.force(0.0, -1.0e-5), 0.0);
  EXPECT_GT(f.force(0.0, -1.0e-5), -1e-40);
}

}  // namespace
