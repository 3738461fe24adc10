// ChainSegment: the oscillator chain and its cut pieces as IDA residual systems
// (spec/MODELS.md §1.1, §1.5; seed 000 Eq. 2.15-2.20).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "subsystem_checks.hpp"

namespace {

using macrostep::library::ChainParameters;
using macrostep::library::ChainSegment;
using macrostep::library::ElementLaw;
using macrostep::library::equal_partition;
using macrostep::model::StateRole;

// Deterministic test random numbers (independent of the standard library).
class TestRng {
 public:
  explicit TestRng(std::uint64_t seed) : s_(seed) {}
  double operator()(double a, double b) {
    s_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return a + (b - a) * (static_cast<double>(z >> 11) * 0x1.0p-53);
  }

 private:
  std::uint64_t s_;
};

// A nonlinear chain with per-element coefficients, exponents 3/6/7, and every force type.
ChainParameters make_chain(std::size_t n, std::uint64_t seed, bool forces = true) {
  TestRng rng(seed);
  ChainParameters p;
  p.mass.resize(n);
  p.element.resize(n + 1);
  p.forces.resize(n);
  p.x0.resize(n);
  p.v0.resize(n);
  const double exponents[] = {3.0, 6.0, 7.0};
  for (std::size_t i = 0; i < n; ++i) {
    p.mass[i] = rng(0.5, 2.0);
    p.x0[i] = rng(-0.2, 0.2);
    p.v0[i] = rng(-1.0, 1.0);
  }
  for (std::size_t i = 0; i <= n; ++i) {
    ElementLaw& e = p.element[i];
    e.c = rng(5e2, 2e3);
    e.d = rng(1.0, 10.0);
    e.C = rng(1e3, 1e4);
    e.D = rng(0.5, 2.0);
    e.ex = exponents[i % 3];
    e.ev = (i % 2 == 0) ? 3.0 : 2.5;
  }
  if (forces) {
    for (std::size_t i = 0; i < n; ++i) {
      switch (i % 5) {
        case 0:
          p.forces[i].harmonic.push_back({rng(1.0, 10.0), rng(1.0, 5.0), rng(0.0, 1.0)});
          break;
        case 1:
          p.forces[i].contact.push_back({-1e-2, rng(5.0, 20.0)});
          break;
        case 2:
          p.forces[i].impulse.push_back({rng(-10.0, 10.0), 0.1, 0.3, 0.05});
          break;
        case 3:
          p.forces[i].modified_sine.push_back({rng(1.0, 10.0), rng(1.0, 5.0), 0.0, 95.0});
          p.forces[i].contact.push_back({-2e-2, rng(5.0, 20.0)});
          break;
        default:
          break;  // unforced body
      }
    }
  }
  return p;
}

struct State {
  std::vector<double> z, zp, u;
};

State random_state(const ChainSegment& seg, TestRng& rng) {
  State s;
  const std::size_t n = seg.state_size();
  s.z.resize(n);
  s.zp.resize(n);
  for (std::size_t k = 0; k < n; k += 2) {
    s.z[k] = rng(-0.4, 0.4);
    s.z[k + 1] = rng(-2.0, 2.0);
    s.zp[k] = rng(-2.0, 2.0);
    s.zp[k + 1] = rng(-100.0, 100.0);
  }
  s.u.resize(seg.input_size());
  for (double& v : s.u) v = rng(-50.0, 50.0);
  return s;
}

std::vector<double> eval_residual(const ChainSegment& seg, double t, const std::vector<double>& z,
                                  const std::vector<double>& zp, const std::vector<double>& u) {
  std::vector<double> r(seg.state_size());
  seg.residual(t, z, zp, u, r);
  return r;
}

// The CSC pattern is well formed: column starts, strictly increasing in-range rows.
void check_pattern_well_formed(const ChainSegment& seg) {
  const auto& p = seg.jacobian_pattern();
  ASSERT_EQ(p.n, seg.state_size());
  ASSERT_EQ(p.column_start.size(), p.n + 1);
  ASSERT_EQ(p.column_start.front(), 0);
  ASSERT_EQ(static_cast<std::size_t>(p.column_start.back()), p.row_index.size());
  for (std::size_t c = 0; c < p.n; ++c) {
    ASSERT_LT(p.column_start[c], p.column_start[c + 1]);
    for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
      ASSERT_GE(p.row_index[k], 0);
      ASSERT_LT(static_cast<std::size_t>(p.row_index[k]), p.n);
      if (k > p.column_start[c]) {
        ASSERT_LT(p.row_index[k - 1], p.row_index[k]);
      }
    }
  }
}

// Analytic dF/dz + cj dF/dz' against central finite differences of residual(), entry by entry
// through the pattern; entries outside the pattern must be exactly zero in the FD matrix.
void check_jacobian(const ChainSegment& seg, double t, const State& s, double cj) {
  check_pattern_well_formed(seg);
  const auto& p = seg.jacobian_pattern();
  const std::size_t n = seg.state_size();
  std::vector<double> values(p.nonzeros(), std::nan(""));
  seg.jacobian(t, s.z, s.zp, s.u, cj, values);
  std::vector<double> dense(n * n, 0.0);
  std::vector<bool> structural(n * n, false);
  for (std::size_t c = 0; c < n; ++c) {
    for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
      const auto r = static_cast<std::size_t>(p.row_index[k]);
      ASSERT_TRUE(std::isfinite(values[k])) << "value " << k << " not written";
      dense[r * n + c] = values[k];
      structural[r * n + c] = true;
    }
  }
  std::vector<double> row_scale(n, 1.0);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      row_scale[r] = std::max(row_scale[r], std::fabs(dense[r * n + c]));
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    const double h = 1e-6 * std::max(1.0, std::fabs(s.z[c]));
    std::vector<double> zp1 = s.z, zm1 = s.z;
    zp1[c] += h;
    zm1[c] -= h;
    const auto rp = eval_residual(seg, t, zp1, s.zp, s.u);
    const auto rm = eval_residual(seg, t, zm1, s.zp, s.u);
    const double hp = 1e-6 * std::max(1.0, std::fabs(s.zp[c]));
    std::vector<double> pp = s.zp, pm = s.zp;
    pp[c] += hp;
    pm[c] -= hp;
    const auto qp = eval_residual(seg, t, s.z, pp, s.u);
    const auto qm = eval_residual(seg, t, s.z, pm, s.u);
    for (std::size_t r = 0; r < n; ++r) {
      const double dz = (rp[r] - rm[r]) / (2.0 * h);
      const double dzp = (qp[r] - qm[r]) / (2.0 * hp);
      const double fd = dz + cj * dzp;
      if (!structural[r * n + c]) {
        EXPECT_EQ(fd, 0.0) << "nonzero outside the pattern at row " << r << ", column " << c;
      } else {
        EXPECT_NEAR(dense[r * n + c], fd, 1e-6 * row_scale[r])
            << "row " << r << ", column " << c << " of segment [" << seg.first_mass() << ", "
            << seg.last_mass() << ")";
      }
    }
  }
}

// Seed 000 Eq. 2.15/2.16 with Eq. 2.9-2.14: Jacobian of the whole chain and of cut segments
// (left end, interior, right end, one-mass interior) vs FD, nonlinear exponents, all force
// types, several random states and times.
TEST(ChainSegment, JacobianMatchesFiniteDifferences) {
  const std::size_t n = 13;
  const ChainParameters params = make_chain(n, 7);
  const std::vector<std::pair<std::size_t, std::size_t>> ranges = {{0, n}, {0, 4}, {4, 9},  {9, n},
                                                                   {5, 6}, {0, 1}, {12, 13}};
  TestRng rng(99);
  for (auto [first, last] : ranges) {
    const ChainSegment seg(params, first, last);
    for (int trial = 0; trial < 3; ++trial) {
      const State s = random_state(seg, rng);
      const double t = rng(0.0, 0.6);
      const double cj = rng(1.0, 1e4);
      check_jacobian(seg, t, s, cj);
    }
  }
}

// Contact forces with realistic stiffness (B_C = 1e7 1/m) near the wall, and a state beyond the
// clamp (seed 000 Eq. 2.12, MODELS.md §1.3): Jacobian still matches FD and stays finite.
TEST(ChainSegment, JacobianWithStiffContact) {
  ChainParameters p = make_chain(4, 3, false);
  p.forces[1].contact.push_back({-1e-2, 1e7});
  p.forces[2].contact.push_back({-1e-2, 1e7});
  const ChainSegment seg(p, 0, 4);
  State s;
  s.z = {0.01, 0.1, 2e-6, -0.3, -1e-6, 0.2, -0.01, 0.0};
  s.zp.assign(8, 0.5);
  // FD step relative to 1/B_C: use a dedicated small-step check on the contact rows.
  std::vector<double> values(seg.jacobian_pattern().nonzeros());
  seg.jacobian(0.0, s.z, s.zp, s.u, 10.0, values);
  for (double v : values) EXPECT_TRUE(std::isfinite(v));
  // Far beyond the clamp: force and derivative finite.
  s.z[2] = 1.0;
  std::vector<double> r(8);
  seg.residual(0.0, s.z, s.zp, s.u, r);
  for (double v : r) EXPECT_TRUE(std::isfinite(v));
  seg.jacobian(0.0, s.z, s.zp, s.u, 10.0, values);
  for (double v : values) EXPECT_TRUE(std::isfinite(v));
  // Scaled states near the wall: dF_v/dx on the contact body vs FD with h = 1e-12.
  s.z[2] = 2e-6;
  seg.jacobian(0.0, s.z, s.zp, s.u, 10.0, values);
  const auto& pat = seg.jacobian_pattern();
  double analytic = 0.0;
  for (auto k = pat.column_start[2]; k < pat.column_start[3]; ++k) {
    if (pat.row_index[k] == 3) analytic = values[k];
  }
  const double h = 1e-12;
  auto zp1 = s.z, zm1 = s.z;
  zp1[2] += h;
  zm1[2] -= h;
  std::vector<double> rp(8), rm(8);
  seg.residual(0.0, zp1, s.zp, s.u, rp);
  seg.residual(0.0, zm1, s.zp, s.u, rm);
  EXPECT_NEAR(analytic, (rp[3] - rm[3]) / (2 * h), 1e-4 * std::fabs(analytic));
}

// The pattern is structural: it does not depend on coefficient values (a zero or free element
// keeps its entries), only on the segment size.
TEST(ChainSegment, PatternDoesNotDependOnValues) {
  ChainParameters a = make_chain(6, 1);
  ChainParameters b = make_chain(6, 2, false);
  for (ElementLaw& e : b.element) e = ElementLaw{};
  for (auto [first, last] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 6}, {2, 5}}) {
    const ChainSegment sa(a, first, last), sb(b, first, last);
    EXPECT_EQ(sa.jacobian_pattern().column_start, sb.jacobian_pattern().column_start);
    EXPECT_EQ(sa.jacobian_pattern().row_index, sb.jacobian_pattern().row_index);
  }
  // Tridiagonal-block structure: 8 entries per interior body, 6 per end body, 4 for one mass.
  EXPECT_EQ(ChainSegment(a, 0, 6).jacobian_pattern().nonzeros(), 8u * 6 - 4);
  EXPECT_EQ(ChainSegment(a, 3, 4).jacobian_pattern().nonzeros(), 4u);
}

// seed 000 §2.3 (Eq. 2.16-2.20): splitting the chain into 3 segments and feeding each cut the
// force F_SD of its cut element evaluated from the whole-chain state reproduces the whole chain's
// residual rows bitwise.
TEST(ChainSegment, CutSegmentsReproduceWholeChainResidual) {
  const std::size_t n = 14;
  const ChainParameters params = make_chain(n, 11);
  const ChainSegment whole(params, 0, n);
  const std::vector<std::size_t> b = equal_partition(n, 3);  // 0, 5, 10, 14
  TestRng rng(5);
  for (int trial = 0; trial < 4; ++trial) {
    State s = random_state(whole, rng);
    const double t = rng(0.0, 0.6);
    const auto r_whole = eval_residual(whole, t, s.z, s.zp, s.u);
    std::vector<double> f_whole(n);
    whole.body_forces(t, s.z, s.u, f_whole);
    // lambda at cut element e (0-based) joining masses e-1 and e.
    auto cut_force = [&](std::size_t e) {
      return params.element[e].force(s.z[2 * e] - s.z[2 * (e - 1)],
                                     s.z[2 * e + 1] - s.z[2 * (e - 1) + 1]);
    };
    for (std::size_t l = 0; l + 1 < b.size(); ++l) {
      const ChainSegment seg(params, b[l], b[l + 1]);
      std::vector<double> u;
      if (b[l] > 0) u.push_back(cut_force(b[l]));
      if (b[l + 1] < n) u.push_back(cut_force(b[l + 1]));
      ASSERT_EQ(u.size(), seg.input_size());
      const auto off = static_cast<std::ptrdiff_t>(2 * b[l]);
      const std::vector<double> z(s.z.begin() + off, s.z.begin() + off + 2 * seg.masses());
      const std::vector<double> zp(s.zp.begin() + off, s.zp.begin() + off + 2 * seg.masses());
      const auto r = eval_residual(seg, t, z, zp, u);
      for (std::size_t k = 0; k < r.size(); ++k) {
        EXPECT_EQ(r[k], r_whole[2 * b[l] + k]) << "segment " << l << " row " << k;
      }
      std::vector<double> f(seg.masses());
      seg.body_forces(t, z, u, f);
      for (std::size_t k = 0; k < f.size(); ++k) EXPECT_EQ(f[k], f_whole[b[l] + k]);
      // Outputs are the coupling-body states (Eq. 2.16-2.20).
      std::vector<double> y(4);
      seg.outputs(t, z, u, y);
      EXPECT_EQ(y[0], s.z[2 * b[l]]);
      EXPECT_EQ(y[1], s.z[2 * (b[l + 1] - 1)]);
      EXPECT_EQ(y[2], s.z[2 * b[l] + 1]);
      EXPECT_EQ(y[3], s.z[2 * (b[l + 1] - 1) + 1]);
    }
  }
}

// initial_state returns a consistent pair (residual == 0 up to rounding) for the whole chain and
// for cut segments with arbitrary inputs; z0 comes from x0/v0.
TEST(ChainSegment, InitialStateIsConsistent) {
  const std::size_t n = 10;
  const ChainParameters params = make_chain(n, 21);
  TestRng rng(8);
  for (auto [first, last] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, n}, {0, 3}, {3, 7}, {7, n}}) {
    const ChainSegment seg(params, first, last);
    std::vector<double> u0(seg.input_size());
    for (double& v : u0) v = rng(-100.0, 100.0);
    std::vector<double> z0(seg.state_size()), zp0(seg.state_size());
    seg.initial_state(u0, z0, zp0);
    for (std::size_t k = 0; k < seg.masses(); ++k) {
      EXPECT_EQ(z0[2 * k], params.x0[first + k]);
      EXPECT_EQ(z0[2 * k + 1], params.v0[first + k]);
      EXPECT_EQ(zp0[2 * k], z0[2 * k + 1]);
    }
    std::vector<double> f(seg.masses());
    seg.body_forces(seg.initial_time(), z0, u0, f);
    const auto r = eval_residual(seg, seg.initial_time(), z0, zp0, u0);
    for (std::size_t k = 0; k < seg.masses(); ++k) {
      EXPECT_EQ(r[2 * k], 0.0);
      EXPECT_NEAR(r[2 * k + 1], 0.0, 4e-16 * (1.0 + std::fabs(f[k])));
    }
  }
}

// seed 000 Eq. 2.15 by hand: one mass between two walls, two three-mass chains with a free end.
TEST(ChainSegment, HandComputedResidual) {
  ChainParameters p;
  p.mass = {2.0};
  p.element = {ElementLaw{100.0, 3.0, 0, 0, 3, 3}, ElementLaw{50.0, 1.0, 0, 0, 3, 3}};
  p.forces.resize(1);
  p.forces[0].harmonic.push_back({4.0, 2.0, 0.0});
  p.x0 = {0.1};
  p.v0 = {-0.5};
  const ChainSegment seg(p, 0, 1);
  EXPECT_EQ(seg.input_size(), 0u);
  const std::vector<double> z = {0.1, -0.5}, zp = {7.0, 3.0};
  const auto r = eval_residual(seg, 0.25, z, zp, {});
  // -F_1 + F_2 + F_ext with F_1 = c1*x + d1*v, F_2 = c2*(0-x) + d2*(0-v).
  const double f = -(100.0 * 0.1 + 3.0 * -0.5) + (50.0 * -0.1 + 1.0 * 0.5) + 4.0 * std::sin(0.5);
  EXPECT_DOUBLE_EQ(r[0], 7.0 - -0.5);
  EXPECT_DOUBLE_EQ(r[1], 2.0 * 3.0 - f);

  // Free right end (MODELS.md §1.4): the last body feels only its left element.
  ChainParameters q;
  q.mass = {1.0, 1.0, 1.0};
  q.element.assign(4, ElementLaw{10.0, 0.0, 0, 0, 3, 3});
  q.element[3] = ElementLaw{};
  q.forces.resize(3);
  q.forces[1].harmonic.push_back({3.0, 1.0, 0.5});  // an interior forced body
  q.x0 = {0.0, 0.0, 1.0};
  q.v0 = {0.0, 0.0, 0.0};
  const ChainSegment free_end(q, 0, 3);
  std::vector<double> fb(3);
  free_end.body_forces(0.0, std::vector<double>{0, 0, 0, 0, 1, 0}, {}, fb);
  EXPECT_DOUBLE_EQ(fb[0], 0.0);
  EXPECT_DOUBLE_EQ(fb[1], 10.0 + 3.0 * std::sin(0.5));
  EXPECT_DOUBLE_EQ(fb[2], -10.0);
}

// Cut inputs (Eq. 2.16): the left body gets -lambda_left, the right body +lambda_right; inputs
// ordered [left, right]; a one-mass interior segment gets both.
TEST(ChainSegment, InputsEnterWithTheRightSign) {
  ChainParameters p = make_chain(5, 4, false);
  const ChainSegment mid(p, 2, 3);
  ASSERT_TRUE(mid.has_left_input());
  ASSERT_TRUE(mid.has_right_input());
  std::vector<double> f(1);
  mid.body_forces(0.0, std::vector<double>{0.0, 0.0}, std::vector<double>{3.0, 0.0}, f);
  EXPECT_EQ(f[0], -3.0);
  mid.body_forces(0.0, std::vector<double>{0.0, 0.0}, std::vector<double>{0.0, 5.0}, f);
  EXPECT_EQ(f[0], 5.0);
  const ChainSegment right(p, 3, 5);
  EXPECT_EQ(right.input_size(), 1u);
  EXPECT_TRUE(right.has_left_input());
  EXPECT_FALSE(right.has_right_input());
  const ChainSegment left(p, 0, 3);
  EXPECT_EQ(left.input_size(), 1u);
  EXPECT_FALSE(left.has_left_input());
  EXPECT_TRUE(left.has_right_input());
}

// Names (DESIGN.md result columns): global 1-based mass indices; inputs named after the cut
// element they replace; roles alternate position / velocity.
TEST(ChainSegment, NamesRolesAndSizes) {
  const ChainParameters p = make_chain(50, 2);
  const ChainSegment seg(p, 15, 20);  // masses 16..20, cut elements 16 and 21
  EXPECT_EQ(seg.masses(), 5u);
  EXPECT_EQ(seg.state_size(), 10u);
  EXPECT_EQ(seg.output_size(), 4u);
  EXPECT_FALSE(seg.has_feedthrough());
  EXPECT_EQ(seg.state_name(0), "x_16");
  EXPECT_EQ(seg.state_name(3), "v_17");
  EXPECT_EQ(seg.state_name(9), "v_20");
  EXPECT_EQ(seg.output_name(0), "x_16");
  EXPECT_EQ(seg.output_name(1), "x_20");
  EXPECT_EQ(seg.output_name(2), "v_16");
  EXPECT_EQ(seg.output_name(3), "v_20");
  EXPECT_EQ(seg.input_name(0), "lambda@16");
  EXPECT_EQ(seg.input_name(1), "lambda@21");
  EXPECT_EQ(ChainSegment(p, 20, 50).input_name(0), "lambda@21");
  EXPECT_EQ(ChainSegment(p, 0, 15).input_name(0), "lambda@16");
  EXPECT_THROW((void)seg.state_name(10), std::out_of_range);
  EXPECT_THROW((void)seg.input_name(2), std::out_of_range);
  const auto roles = seg.state_roles();
  ASSERT_EQ(roles.size(), 10u);
  for (std::size_t i = 0; i < roles.size(); ++i) {
    EXPECT_EQ(roles[i], i % 2 == 0 ? StateRole::kPosition : StateRole::kVelocity);
  }
  EXPECT_EQ(seg.initial_time(), 0.0);
}

// ∂y/∂z and ∂F/∂u (the optional coupling Jacobians) against the finite-difference defaults, for
// the whole chain and for left, interior, right and one-mass segments.
TEST(ChainSegment, CouplingJacobiansMatchFiniteDifferences) {
  const ChainParameters params = make_chain(9, 17);
  TestRng rng(3);
  for (auto [first, last] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 9}, {0, 3}, {3, 7}, {7, 9}, {4, 5}}) {
    const ChainSegment seg(params, first, last);
    const State s = random_state(seg, rng);
    macrostep::testing::expect_coupling_jacobians_match_differences(seg, {0.2, s.z, s.zp, s.u});
    EXPECT_EQ(seg.input_jacobian_pattern().nonzeros(), seg.input_size());
  }
}

// Constructor contract: 0 <= first < last <= n and consistent parameter sizes.
TEST(ChainSegment, RejectsBadRanges) {
  const ChainParameters p = make_chain(5, 1);
  EXPECT_THROW(ChainSegment(p, 3, 3), std::invalid_argument);
  EXPECT_THROW(ChainSegment(p, 4, 2), std::invalid_argument);
  EXPECT_THROW(ChainSegment(p, 0, 6), std::invalid_argument);
  ChainParameters bad = p;
  bad.element.pop_back();
  EXPECT_THROW(ChainSegment(bad, 0, 5), std::invalid_argument);
}

}  // namespace
