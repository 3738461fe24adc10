// A second implementation of the described-system recurrence (coupled_stability.hpp), written
// the way the schemes run a macro step rather than the way the analysis assembles it: each
// subsystem's linearised ODE ż = A_i z + B_i u(t) integrated by classical Runge–Kutta with
// fine substeps, its inputs the Lagrange polynomials of the past coupling values (written out
// here, not the runtime's stencils), the implicit scheme's new values and Gauss–Seidel's
// subsystems one after another solved for by superposition of unit runs (converged end values)
// or run once with their own states extrapolated (sequential). One macro step applied to every
// unit vector of X = [z; u_N, u_{N−1}, …; z_{N−1}, …] gives the recurrence matrix column by column;
// its spectral radius must equal the analysis's, below and above the stability edge, on three
// systems with more than two bodies: a five-mass chain cut into four subsystems, the three-body
// mechanism of configs/three-body.toml (one body fed by two springs) and the branched drive
// train of configs/branched.toml (a hub with three neighbours).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/analysis/coupled_stability.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep::analysis {
namespace {

using Vector = std::vector<double>;
constexpr int kSubsteps = 100;  // Runge–Kutta steps per macro step

// Lagrange polynomial through (t_j, v_j), evaluated at t.
double lagrange(const Vector& t_nodes, const Vector& values, double t) {
  double sum = 0.0;
  for (std::size_t j = 0; j < t_nodes.size(); ++j) {
    double l = 1.0;
    for (std::size_t k = 0; k < t_nodes.size(); ++k) {
      if (k != j) l *= (t - t_nodes[k]) / (t_nodes[j] - t_nodes[k]);
    }
    sum += l * values[j];
  }
  return sum;
}

// Subsystem `sub`'s states after [0, h] from z0 (its rows of the stacked state) under inputs
// given at the Runge–Kutta stage times: u[c][k] = u_c(k·h/(2·kSubsteps)).
Vector integrate(const LinearCoupledSystem& s, std::size_t sub, const Vector& z0,
                 const std::vector<Vector>& u, double h) {
  const std::size_t r0 = s.state_offset[sub], n = s.state_offset[sub + 1] - r0;
  const std::size_t nu = s.couplings();
  const auto rhs = [&](std::size_t half, const Vector& z, Vector& dz) {
    for (std::size_t i = 0; i < n; ++i) {
      dz[i] = 0.0;
      for (std::size_t j = 0; j < n; ++j) dz[i] += s.a(r0 + i, r0 + j) * z[j];
      for (std::size_t c = 0; c < nu; ++c) dz[i] += s.b(r0 + i, c) * u[c][half];
    }
  };
  const double dt = h / kSubsteps;
  Vector z = z0, k1(n), k2(n), k3(n), k4(n), tmp(n);
  for (std::size_t k = 0; k < static_cast<std::size_t>(kSubsteps); ++k) {
    rhs(2 * k, z, k1);
    for (std::size_t i = 0; i < n; ++i) tmp[i] = z[i] + dt / 2 * k1[i];
    rhs(2 * k + 1, tmp, k2);
    for (std::size_t i = 0; i < n; ++i) tmp[i] = z[i] + dt / 2 * k2[i];
    rhs(2 * k + 1, tmp, k3);
    for (std::size_t i = 0; i < n; ++i) tmp[i] = z[i] + dt * k3[i];
    rhs(2 * k + 2, tmp, k4);
    for (std::size_t i = 0; i < n; ++i) z[i] += dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return z;
}

// One macro step of size h from X by the scheme's own procedure; returns the next X (`points`
// past coupling values, `state_points` past states).
Vector macro_step(const LinearCoupledSystem& s, const CoupledMethod& m, std::size_t points,
                  std::size_t state_points, double h, const Vector& x) {
  const std::size_t n = s.states(), nu = s.couplings(), k = s.state_offset.size() - 1;
  const int kappa = m.order;
  const auto past = [&](std::size_t j, std::size_t c) { return x[n + j * nu + c]; };
  // State i at T_{N−j} (j = 0: z_N).
  const auto past_state = [&](std::size_t j, std::size_t i) {
    return j == 0 ? x[i] : x[n + nu * points + (j - 1) * n + i];
  };
  // The explicit scheme's extrapolation of c: degree κ through T_N, T_{N−1}, …, T_{N−κ}; the
  // interpolation: degree κ through T_{N−κ+1}, …, T_N and the new value at T_{N+1}. As nodes
  // and values of the Lagrange polynomial.
  const auto polynomial = [&](std::size_t c, bool takes_new, double u_new) {
    std::pair<Vector, Vector> p;
    if (takes_new) {
      p.first.push_back(h);
      p.second.push_back(u_new);
    }
    for (int j = 0; j < kappa + (takes_new ? 0 : 1); ++j) {
      p.first.push_back(-j * h);
      p.second.push_back(past(static_cast<std::size_t>(j), c));
    }
    return p;
  };
  // takes[c]: subsystem takes c through its new value u_new[c] (else extrapolated).
  const auto run = [&](std::size_t sub, const std::vector<bool>& takes, const Vector& u_new) {
    const Vector z0(x.begin() + static_cast<long>(s.state_offset[sub]),
                    x.begin() + static_cast<long>(s.state_offset[sub + 1]));
    std::vector<Vector> u(nu, Vector(2 * kSubsteps + 1, 0.0));
    for (std::size_t c = 0; c < nu; ++c) {
      bool feeds = false;
      for (std::size_t i = s.state_offset[sub]; i < s.state_offset[sub + 1]; ++i)
        feeds = feeds || s.b(i, c) != 0.0;
      if (!feeds) continue;
      const auto [nodes, values] = polynomial(c, takes[c], takes[c] ? u_new[c] : 0.0);
      for (std::size_t half = 0; half < u[c].size(); ++half) {
        const double t = h * static_cast<double>(half) / (2 * kSubsteps);
        u[c][half] = lagrange(nodes, values, t);
      }
    }
    return integrate(s, sub, z0, u, h);
  };
  Vector z(n, 0.0);
  const auto store = [&](std::size_t sub, const Vector& zs) {
    std::copy(zs.begin(), zs.end(), z.begin() + static_cast<long>(s.state_offset[sub]));
  };
  const auto g_of = [&](std::size_t c, const Vector& zz) {
    double v = 0.0;
    for (std::size_t j = 0; j < n; ++j) v += s.g(c, j) * zz[j];
    return v;
  };
  // The subsystems in `subs` take the channels `takes` through new values u_c = G_c z that
  // depend on their own end states: z_end is affine in u_new, so one run with u_new = 0 and one
  // per channel give it, and (I − G P) u_new = G z_end(0) solves it.
  const auto solve_new = [&](const std::vector<std::size_t>& subs, const std::vector<bool>& takes) {
    Vector zero(nu, 0.0);
    for (const std::size_t sub : subs) store(sub, run(sub, takes, zero));
    const Vector z_base = z;
    std::vector<std::size_t> channels;
    for (std::size_t c = 0; c < nu; ++c)
      if (takes[c]) channels.push_back(c);
    Matrix lhs = Matrix::identity(channels.size()), rhs(channels.size(), 1);
    for (std::size_t a = 0; a < channels.size(); ++a) {
      rhs(a, 0) = g_of(channels[a], z_base);
      Vector unit(nu, 0.0);
      unit[channels[a]] = 1.0;
      z = z_base;
      for (const std::size_t sub : subs) store(sub, run(sub, takes, unit));
      for (std::size_t b = 0; b < channels.size(); ++b)
        lhs(b, a) -= g_of(channels[b], z) - g_of(channels[b], z_base);
    }
    const Matrix u = channels.empty() ? Matrix(0, 1) : solve(lhs, rhs);
    Vector u_new(nu, 0.0);
    for (std::size_t a = 0; a < channels.size(); ++a) u_new[channels[a]] = u(a, 0);
    z = z_base;
    for (const std::size_t sub : subs) store(sub, run(sub, takes, u_new));
  };
  std::vector<std::size_t> all(k);
  for (std::size_t i = 0; i < k; ++i) all[i] = i;
  if (m.scheme == CoupledScheme::kExplicit) {
    for (std::size_t i = 0; i < k; ++i) store(i, run(i, std::vector<bool>(nu, false), {}));
  } else if (m.scheme == CoupledScheme::kImplicit) {
    solve_new(all, std::vector<bool>(nu, true));
  } else {  // Gauss–Seidel: a Jacobi pass, then each later subsystem of the sequence
    const std::vector<std::size_t> sequence = m.sequence.empty() ? all : m.sequence;
    for (std::size_t i = 0; i < k; ++i) store(i, run(i, std::vector<bool>(nu, false), {}));
    std::vector<bool> ran(k, false);
    ran[sequence[0]] = true;
    for (std::size_t q = 1; q < k; ++q) {
      const std::size_t sub = sequence[q];
      std::vector<bool> takes(nu, false);
      for (std::size_t c = 0; c < nu; ++c)
        takes[c] = std::all_of(s.reads[c].begin(), s.reads[c].end(),
                               [&](std::size_t j) { return j == sub || ran[j]; });
      if (m.end_value == GaussSeidelEndValue::kConverged) {
        solve_new({sub}, takes);
      } else {  // G_c applied to the new states of the others and sub's own extrapolated ones
        Vector at_end = z, nodes, values(static_cast<std::size_t>(kappa) + 1);
        for (int j = 0; j <= kappa; ++j) nodes.push_back(-j * h);
        for (std::size_t i = s.state_offset[sub]; i < s.state_offset[sub + 1]; ++i) {
          for (std::size_t j = 0; j < values.size(); ++j) values[j] = past_state(j, i);
          at_end[i] = lagrange(nodes, values, h);
        }
        Vector u_new(nu, 0.0);
        for (std::size_t c = 0; c < nu; ++c)
          if (takes[c]) u_new[c] = g_of(c, at_end);
        store(sub, run(sub, takes, u_new));
      }
      ran[sub] = true;
    }
  }
  Vector next(x.size(), 0.0);
  std::copy(z.begin(), z.end(), next.begin());
  for (std::size_t c = 0; c < nu; ++c) next[n + c] = g_of(c, z);
  for (std::size_t j = 1; j < points; ++j)
    for (std::size_t c = 0; c < nu; ++c) next[n + j * nu + c] = past(j - 1, c);
  for (std::size_t j = 1; j <= state_points; ++j)
    for (std::size_t i = 0; i < n; ++i)
      next[n + nu * points + (j - 1) * n + i] = past_state(j - 1, i);
  return next;
}

double brute_force_rho(const LinearCoupledSystem& s, const CoupledMethod& m, double h) {
  const Recurrence r = coupled_recurrence(s, m, h);
  const std::size_t dim = s.states() * (1 + r.state_points) + s.couplings() * r.points;
  EXPECT_EQ(r.m.rows(), dim);
  Matrix mb(dim, dim);
  for (std::size_t col = 0; col < dim; ++col) {
    Vector e(dim, 0.0);
    e[col] = 1.0;
    const Vector next = macro_step(s, m, r.points, r.state_points, h, e);
    for (std::size_t row = 0; row < dim; ++row) mb(row, col) = next[row];
  }
  return spectral_radius(mb);
}

LinearCoupledSystem from_config(const std::string& name) {
  const config::RunConfig c = config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/" + name);
  return linearise(system::build_system(*c.system_description));
}

LinearCoupledSystem five_mass_chain() {
  library::ChainParameters p;
  p.mass = {1.0, 2.0, 0.5, 1.5, 1.0};
  const Vector c{100, 40, 80, 60, 120, 90}, d{0.5, 0.2, 0.1, 0.3, 0.2, 0.4};
  for (std::size_t e = 0; e < c.size(); ++e) p.element.push_back({c[e], d[e]});
  p.forces.resize(p.mass.size());
  p.x0.assign(p.mass.size(), 0.0);
  p.v0.assign(p.mass.size(), 0.0);
  return linearise(system::make_chain_system(p, {0, 1, 3, 4, 5}));
}

void expect_agreement(const LinearCoupledSystem& s, const std::string& label) {
  const double omega = fastest_frequency(s);
  ASSERT_GT(omega, 0.0);
  // Gauss–Seidel twice: converged and sequential end values.
  for (const auto& [scheme, end_value] :
       {std::pair{CoupledScheme::kExplicit, GaussSeidelEndValue::kConverged},
        {CoupledScheme::kImplicit, GaussSeidelEndValue::kConverged},
        {CoupledScheme::kGaussSeidel, GaussSeidelEndValue::kConverged},
        {CoupledScheme::kGaussSeidel, GaussSeidelEndValue::kSequential}}) {
    for (const int kappa : {1, 2}) {
      CoupledMethod m;
      m.scheme = scheme;
      m.end_value = end_value;
      m.order = kappa;
      bool stable = false, unstable = false;
      for (const double w : {0.3, 1.0, 2.5}) {
        const double h = w / omega;
        const double expected = brute_force_rho(s, m, h);
        const double got = spectral_radius(coupled_recurrence(s, m, h).m);
        EXPECT_NEAR(got, expected, 1e-7 * std::max(1.0, expected))
            << label << ", scheme " << static_cast<int>(scheme) << ", sequential "
            << (end_value == GaussSeidelEndValue::kSequential) << ", kappa " << kappa
            << ", omega_hat " << w;
        (expected <= 1.0 + 1e-9 ? stable : unstable) = true;
      }
      // The grid reaches both sides of the edge for the explicit scheme.
      if (scheme == CoupledScheme::kExplicit) {
        EXPECT_TRUE(stable && unstable) << label << ", kappa " << kappa;
      }
    }
  }
}

TEST(CoupledRecurrence, FiveMassChainInFourSubsystems) {
  expect_agreement(five_mass_chain(), "five-mass chain");
}

TEST(CoupledRecurrence, ThreeBodyMechanism) {
  const LinearCoupledSystem s = from_config("configs/three-body.toml");
  ASSERT_EQ(s.couplings(), 2u);
  expect_agreement(s, "three-body");
}

TEST(CoupledRecurrence, BranchedDriveTrain) {
  const LinearCoupledSystem s = from_config("configs/branched.toml");
  ASSERT_EQ(s.couplings(), 3u);
  expect_agreement(s, "branched");
}

// Gauss–Seidel's sequence matters: on the five-mass chain in four subsystems the sequence
// 1, 3, 2, 4 (not a cyclic shift of index order, which would give the same spectrum) gives
// another recurrence, and the second implementation follows it too; a sequence must be a
// permutation.
TEST(CoupledRecurrence, GaussSeidelFollowsTheSequence) {
  const LinearCoupledSystem s = five_mass_chain();
  CoupledMethod index, other;
  index.scheme = other.scheme = CoupledScheme::kGaussSeidel;
  index.order = other.order = 1;
  other.sequence = {0, 2, 1, 3};
  const double h = 1.0 / fastest_frequency(s);
  const double rho_other = spectral_radius(coupled_recurrence(s, other, h).m);
  EXPECT_GT(std::abs(spectral_radius(coupled_recurrence(s, index, h).m) - rho_other), 1e-6);
  EXPECT_NEAR(brute_force_rho(s, other, h), rho_other, 1e-7 * std::max(1.0, rho_other));
  CoupledMethod bad = index;
  bad.sequence = {0, 1, 1, 3};
  EXPECT_THROW(coupled_recurrence(s, bad, h), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep::analysis
