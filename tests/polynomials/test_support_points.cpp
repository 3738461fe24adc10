// SupportPoints: POD step polynomial, hot-path evaluation, end basis (METHODS §2.2, D-3).
#include "macrostep/polynomials/support_points.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "grid_support.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/lagrange.hpp"

namespace mp = macrostep::polynomials;
namespace mt = macrostep::testing;

namespace {

// Three channels with distinct smooth histories on a non-uniform grid ending at T_N = 2.0.
mp::CouplingHistory sample_history(std::size_t points = 8) {
  const auto t = mt::grid_ending_at(2.0, 0.1, mt::random_ratios(points, 5), points);
  return mt::history_from(t, 3, [](std::size_t c, double x) {
    return c == 0 ? std::sin(2.0 * x) : c == 1 ? std::exp(-x) : 1.0 + x * x * x;
  });
}

}  // namespace

// METHODS §2.2: "with s = u^pre of the same degree, p is the extrapolation polynomial through
// T_{N−κ}..T_N". The SupportPoints built with the Lagrange predictor must evaluate to that
// polynomial (computed here from the κ+1 history points directly) everywhere.
TEST(SupportPoints, EvaluateEqualsExtrapolationPolynomial) {
  const auto h = sample_history();
  const double t_next = 2.13;
  for (int kappa = 0; kappa <= 6; ++kappa) {
    std::vector<double> u_pre(3);
    mp::lagrange_prediction(h, kappa, t_next, u_pre);
    const mp::SupportPoints sp = mp::step_polynomial(h, kappa, t_next, u_pre);
    ASSERT_NO_THROW(sp.validate());
    EXPECT_EQ(sp.degree, kappa);
    EXPECT_EQ(sp.step_begin, 2.0);
    EXPECT_EQ(sp.step_end(), t_next);
    const std::size_t n = static_cast<std::size_t>(kappa) + 1;
    std::vector<double> nodes(n), vals(n), u(3);
    for (std::size_t m = 0; m < n; ++m) nodes[m] = h.time_back(n - 1 - m);
    for (double t : {2.0, 2.05, 2.13, 2.2, 1.97}) {
      sp.evaluate(t, u);
      for (std::size_t c = 0; c < 3; ++c) {
        for (std::size_t m = 0; m < n; ++m) vals[m] = h.values_back(n - 1 - m)[c];
        EXPECT_NEAR(u[c], mp::lagrange_value(nodes, vals, t), 1e-11)
            << "kappa " << kappa << " c " << c << " t " << t;
      }
    }
  }
}

// §2.2: explicit polynomials start at u_N (the node T_N) and end at s.
TEST(SupportPoints, InterpolatesItsNodes) {
  const auto h = sample_history();
  const std::vector<double> s = {0.4, -0.2, 7.0};
  for (int kappa = 1; kappa <= 6; ++kappa) {
    const mp::SupportPoints sp = mp::step_polynomial(h, kappa, 2.1, s);
    std::vector<double> u(3);
    sp.evaluate(2.1, u);
    EXPECT_EQ(u, s);
    sp.evaluate(2.0, u);
    for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(u[c], h.newest_values()[c]);
  }
}

// METHODS §2.2: for κ = 0, p ≡ s and ℓ_{N+1} ≡ 1.
TEST(SupportPoints, DegreeZeroIsConstantEndValue) {
  const auto h = sample_history();
  const mp::SupportPoints sp = mp::step_polynomial(h, 0, 2.2, std::vector<double>{1.5, 2.5, 3.5});
  std::vector<double> u(3);
  for (double t : {1.0, 2.0, 2.1, 5.0}) {
    sp.evaluate(t, u);
    EXPECT_EQ(u, (std::vector<double>{1.5, 2.5, 3.5}));
    EXPECT_EQ(sp.end_basis(t), 1.0);
  }
}

// §2.2: p(t; s + Δs) − p(t; s) = Δs·ℓ_{N+1}(t); ℓ = 1 at T_{N+1}, 0 at the old nodes.
TEST(SupportPoints, EndBasisDescribesEndValueChanges) {
  const auto h = sample_history();
  const double t_next = 2.17;
  for (int kappa = 0; kappa <= 6; ++kappa) {
    std::vector<double> s(3);
    mp::lagrange_prediction(h, std::min(kappa, 5), t_next, s);
    mp::SupportPoints sp = mp::step_polynomial(h, kappa, t_next, s);
    mp::SupportPoints perturbed = sp;
    const double ds = 1e-3;
    perturbed.set_end_value(1, sp.end_value(1) + ds);
    std::vector<double> u(3), up(3);
    for (double t : {2.0, 2.03, 2.1, 2.17, 2.3}) {
      sp.evaluate(t, u);
      perturbed.evaluate(t, up);
      const double ell = sp.end_basis(t);
      EXPECT_NEAR(up[1] - u[1], ds * ell, 1e-14) << "kappa " << kappa << " t " << t;
      EXPECT_EQ(up[0], u[0]);
      EXPECT_EQ(up[2], u[2]);
      EXPECT_NEAR(ell, mp::end_basis(h, kappa, t_next, t), 1e-15);
    }
    EXPECT_EQ(sp.end_basis(t_next), 1.0);
    for (int j = 0; j < kappa; ++j) EXPECT_EQ(sp.end_basis(h.time_back(j)), 0.0);
  }
}

// D-3 / DESIGN contract 3: the struct is copied byte-wise through rings; the copy must evaluate
// bit-identically, and repeated evaluation is deterministic.
TEST(SupportPoints, ByteCopyEvaluatesBitIdentically) {
  const auto h = sample_history();
  std::vector<double> s(3);
  mp::lagrange_prediction(h, 4, 2.2, s);
  const mp::SupportPoints sp = mp::step_polynomial(h, 4, 2.2, s);
  alignas(64) std::array<unsigned char, sizeof(mp::SupportPoints)> ring_slot{};
  std::memcpy(ring_slot.data(), &sp, sizeof sp);
  mp::SupportPoints received;
  std::memcpy(&received, ring_slot.data(), sizeof received);
  std::vector<double> a(3), b(3), c(3);
  for (double t = 1.9; t < 2.3; t += 0.0123) {
    sp.evaluate(t, a);
    received.evaluate(t, b);
    sp.evaluate(t, c);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), 3 * sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(a.data(), c.data(), 3 * sizeof(double)), 0);
  }
  // Built twice from the same data: byte-identical (no uninitialised padding or slots).
  const mp::SupportPoints again = mp::step_polynomial(h, 4, 2.2, s);
  EXPECT_EQ(std::memcmp(&sp, &again, sizeof sp), 0);
}

// METHODS §1.3 / Eq. 2.24 per subsystem: a subsystem's inputs {λ_{L−1}, λ_L} in its input order.
TEST(SupportPoints, ChannelSelectionFollowsSubsystemInputOrder) {
  const auto h = sample_history();
  const std::vector<double> s = {10.0, 11.0, 12.0};
  const std::vector<std::size_t> inputs = {2, 0};
  const mp::SupportPoints sp = mp::step_polynomial(h, 2, 2.1, s, inputs);
  EXPECT_EQ(sp.channels, 2u);
  std::vector<double> u(2);
  sp.evaluate(2.1, u);
  EXPECT_EQ(u, (std::vector<double>{12.0, 10.0}));
  sp.evaluate(h.time_back(1), u);
  EXPECT_EQ(u[0], h.values_back(1)[2]);
  EXPECT_EQ(u[1], h.values_back(1)[0]);
}

// D-3 fixed-capacity message: degree > 6 or > kMaxChannels inputs fail with a clear message.
TEST(SupportPoints, CapacityLimitsAreReportedClearly) {
  const auto h = sample_history();
  const std::vector<double> s(3, 0.0);
  EXPECT_THROW(mp::step_polynomial(h, 7, 2.1, s), std::invalid_argument);
  const std::vector<std::size_t> too_many(9, 0);
  try {
    mp::step_polynomial(h, 1, 2.1, s, too_many);
    FAIL() << "nine channels accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kMaxChannels"), std::string::npos) << e.what();
  }
  const std::vector<std::size_t> bad_channel = {3};
  EXPECT_THROW(mp::step_polynomial(h, 1, 2.1, s, bad_channel), std::invalid_argument);
  EXPECT_THROW(mp::step_polynomial(h, 1, 2.0, s), std::invalid_argument);  // T_{N+1} = T_N
  mp::SupportPoints sp = mp::step_polynomial(h, 2, 2.1, s);
  sp.time[1] = sp.time[0];
  EXPECT_THROW(sp.validate(), std::invalid_argument);
  sp = mp::step_polynomial(h, 2, 2.1, s);
  sp.channels = 9;
  EXPECT_THROW(sp.validate(), std::invalid_argument);
}

// DESIGN data flow: the subsystem evaluates u(t) from the support points through InputFunction.
TEST(SupportPoints, InputFunctionAdapterChecksInputCount) {
  const auto h = sample_history();
  const std::vector<double> s = {1.0, 2.0, 3.0};
  const mp::SupportPoints sp = mp::step_polynomial(h, 1, 2.1, s);
  EXPECT_THROW(mp::SupportPointInput(sp, 2), std::invalid_argument);
  const mp::SupportPointInput in(sp, 3);
  const macrostep::model::InputFunction& f = in;
  std::vector<double> u(3);
  f.evaluate(2.1, u);
  EXPECT_EQ(u, s);
}
