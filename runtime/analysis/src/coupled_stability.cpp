// The described-system recurrence (coupled_stability.hpp; METHODS.md §7.1 generalised).
#include "macrostep/analysis/coupled_stability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "exact_step.hpp"

namespace macrostep::analysis {

namespace {

using polynomials::Stencil;

// One subsystem linearised at its initial point: ż = A z + B u_i, y = C z + D u_i.
struct LinearPart {
  Matrix a, b, c, d;
};

std::string subsystem_label(std::size_t i, std::span<const std::string> names) {
  return i < names.size() ? fmt::format("subsystem \"{}\"", names[i])
                          : fmt::format("subsystem {}", i + 1);
}

LinearPart linearise_part(const model::Subsystem& s, std::span<const double> u,
                          const std::string& label) {
  const std::size_t n = s.state_size(), m = s.input_size(), p = s.output_size();
  const double t = s.initial_time();
  std::vector<double> z(n), zp(n);
  s.initial_state(u, z, zp);
  LinearPart part{Matrix(n, n), Matrix(n, m), Matrix(p, n), Matrix(p, m)};
  if (n > 0) {
    const model::SparsityPattern& pattern = s.jacobian_pattern();
    std::vector<double> j0(pattern.nonzeros()), j1(pattern.nonzeros());
    s.jacobian(t, z, zp, u, 0.0, j0);  // F_z
    s.jacobian(t, z, zp, u, 1.0, j1);  // F_z + F_ż
    Matrix fz(n, n), fzp(n, n);
    for (std::size_t col = 0; col < n; ++col) {
      for (auto k = pattern.column_start[col]; k < pattern.column_start[col + 1]; ++k) {
        const auto row = static_cast<std::size_t>(pattern.row_index[static_cast<std::size_t>(k)]);
        fz(row, col) += j0[static_cast<std::size_t>(k)];
        fzp(row, col) += j1[static_cast<std::size_t>(k)] - j0[static_cast<std::size_t>(k)];
      }
    }
    Matrix fu(n, m);
    const model::EntryPattern up = s.input_jacobian_pattern();
    std::vector<double> values(up.nonzeros());
    s.input_jacobian(t, z, zp, u, values);
    for (std::size_t k = 0; k < values.size(); ++k) fu(up.row[k], up.column[k]) += values[k];
    try {
      part.a = -1.0 * solve(fzp, fz);
      part.b = -1.0 * solve(fzp, fu);
    } catch (const std::runtime_error&) {
      throw std::invalid_argument(
          label +
          ": ∂F/∂ż is singular at the initial state (algebraic states); the stability "
          "analysis needs every subsystem in ODE form");
    }
    const model::EntryPattern op = s.output_jacobian_pattern();
    values.assign(op.nonzeros(), 0.0);
    s.output_jacobian(t, z, u, values);
    for (std::size_t k = 0; k < values.size(); ++k) part.c(op.row[k], op.column[k]) += values[k];
  }
  if (s.has_feedthrough() && m > 0) {
    std::vector<double> d(p * m);
    s.feedthrough_jacobian(t, z, u, d);
    for (std::size_t col = 0; col < m; ++col)
      for (std::size_t row = 0; row < p; ++row) part.d(row, col) = d[col * p + row];
  }
  return part;
}

}  // namespace

Matrix LinearCoupledSystem::monolithic() const {
  return a + b * g;
}

LinearCoupledSystem linearise(const system::CoupledSystem& system,
                              std::span<const std::string> names) {
  const std::size_t k_sub = system.subsystem_count(), nu = system.coupling_count();
  LinearCoupledSystem out;
  out.state_offset.assign(k_sub + 1, 0);
  std::vector<std::size_t> output_offset(k_sub + 1, 0);
  for (std::size_t i = 0; i < k_sub; ++i) {
    out.state_offset[i + 1] = out.state_offset[i] + system.subsystem(i).state_size();
    output_offset[i + 1] = output_offset[i] + system.subsystem(i).output_size();
  }
  const std::size_t n = out.state_offset[k_sub], outputs = output_offset[k_sub];
  if (n > kMaxLinearisedStates) {
    throw std::invalid_argument(fmt::format(
        "the system has {} states; the stability analysis takes at most {} (dense matrices)", n,
        kMaxLinearisedStates));
  }
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    if (system.law(k).is_constraint()) {
      throw std::invalid_argument(fmt::format(
          "coupling variable {} belongs to a constraint law, which the stability analysis does "
          "not linearise",
          system.coupling_name(system.law_offset(k))));
    }
  }
  const std::vector<double> u0 = system.initial_couplings();
  out.a = Matrix(n, n);
  out.b = Matrix(n, nu);
  Matrix c(outputs, n), d(outputs, nu);
  std::vector<std::vector<double>> y0(k_sub);
  for (std::size_t i = 0; i < k_sub; ++i) {
    const model::Subsystem& s = system.subsystem(i);
    std::vector<double> u(s.input_size());
    system.gather_inputs(i, u0, u);
    const LinearPart part = linearise_part(s, u, subsystem_label(i, names));
    const std::size_t z0 = out.state_offset[i], o0 = output_offset[i];
    // An input is the sum of its feeds: its B and D columns go to every feed's column.
    for (std::size_t r = 0; r < s.state_size(); ++r) {
      for (std::size_t col = 0; col < s.state_size(); ++col)
        out.a(z0 + r, z0 + col) = part.a(r, col);
      for (std::size_t in = 0; in < s.input_size(); ++in) {
        for (const std::size_t f : system.input_feeds(i, in)) out.b(z0 + r, f) += part.b(r, in);
      }
    }
    for (std::size_t o = 0; o < s.output_size(); ++o) {
      for (std::size_t col = 0; col < s.state_size(); ++col) c(o0 + o, z0 + col) = part.c(o, col);
      for (std::size_t in = 0; in < s.input_size(); ++in) {
        for (const std::size_t f : system.input_feeds(i, in)) d(o0 + o, f) += part.d(o, in);
      }
    }
    std::vector<double> zz(s.state_size()), zp(s.state_size());
    s.initial_state(u, zz, zp);
    y0[i].resize(s.output_size());
    s.outputs(s.initial_time(), zz, u, y0[i]);
  }
  out.feedthrough = d.norm_inf() != 0.0;
  out.reads.assign(nu, {});
  Matrix l(nu, outputs);  // ∂φ/∂y of every law
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    const system::CouplingLaw& law = system.law(k);
    const auto reads = law.reads();
    const std::size_t writes = law.write_count();
    std::vector<std::size_t> subsystems;
    for (const system::OutputRef& r : reads) subsystems.push_back(r.subsystem);
    std::sort(subsystems.begin(), subsystems.end());
    subsystems.erase(std::unique(subsystems.begin(), subsystems.end()), subsystems.end());
    for (std::size_t w = 0; w < writes; ++w) out.reads[system.law_offset(k) + w] = subsystems;
    std::vector<double> dphi(writes * reads.size());
    system.coupling_jacobian(k, y0, dphi);
    for (std::size_t w = 0; w < writes; ++w) {
      for (std::size_t r = 0; r < reads.size(); ++r) {
        l(system.law_offset(k) + w, output_offset[reads[r].subsystem] + reads[r].output) +=
            dphi[w * reads.size() + r];
      }
    }
  }
  try {  // u = L (C z + D u)  ⇒  u = (I − L D)⁻¹ L C z
    out.g = solve(Matrix::identity(nu) - l * d, l * c);
  } catch (const std::runtime_error&) {
    throw std::invalid_argument(
        "the coupling equations u = φ(C z + D u) have no unique solution at the initial point "
        "(I − ∂φ/∂y·D is singular: an algebraic loop through feed-through subsystems)");
  }
  return out;
}

namespace {

// takes[i][c]: whether subsystem i takes coupling variable c through its new value u_{N+1}
// (interpolated, or solved for) rather than extrapolating it from the past values.
std::vector<std::vector<bool>> new_value_mask(const LinearCoupledSystem& s,
                                              const CoupledMethod& method) {
  const std::size_t k = s.state_offset.size() - 1, nu = s.couplings();
  std::vector<std::vector<bool>> takes(
      k, std::vector<bool>(nu, method.scheme == CoupledScheme::kImplicit));
  if (method.scheme != CoupledScheme::kGaussSeidel) return takes;
  std::vector<std::size_t> sequence = method.sequence;
  if (sequence.empty()) {
    for (std::size_t i = 0; i < k; ++i) sequence.push_back(i);
  }
  std::vector<bool> ran(k, false);
  for (const std::size_t i : sequence) {
    if (i >= k || ran[i] || sequence.size() != k) {
      throw std::invalid_argument(
          fmt::format("the Gauss-Seidel sequence must name each of the {} subsystems once", k));
    }
    ran[i] = true;
  }
  if (s.feedthrough) {
    throw std::invalid_argument(
        "the Gauss-Seidel analysis takes systems without direct feed-through (the values a "
        "later subsystem interpolates would depend on the inputs the earlier ones ended with); "
        "analyse this system for explicit or implicit steps");
  }
  ran.assign(k, false);
  ran[sequence.front()] = true;  // the first subsystem's Jacobi run stands
  for (std::size_t q = 1; q < k; ++q) {
    const std::size_t i = sequence[q];
    for (std::size_t c = 0; c < nu; ++c) {
      takes[i][c] = std::all_of(s.reads[c].begin(), s.reads[c].end(),
                                [&](std::size_t j) { return j == i || ran[j]; });
    }
    ran[i] = true;
  }
  return takes;
}

// Whether coupling c's law reads subsystem sub.
bool reads(const LinearCoupledSystem& s, std::size_t c, std::size_t sub) {
  return std::binary_search(s.reads[c].begin(), s.reads[c].end(), sub);
}

// Whether some subsystem takes a new value whose law reads that subsystem itself.
bool reads_itself(const LinearCoupledSystem& s, const std::vector<std::vector<bool>>& takes) {
  for (std::size_t sub = 0; sub < takes.size(); ++sub)
    for (std::size_t c = 0; c < takes[sub].size(); ++c)
      if (takes[sub][c] && reads(s, c, sub)) return true;
  return false;
}

}  // namespace

Recurrence coupled_recurrence(const LinearCoupledSystem& s, const CoupledMethod& method, double h) {
  if (!(h > 0.0) || !std::isfinite(h)) throw std::invalid_argument("recurrence: h must be > 0");
  if (method.scheme == CoupledScheme::kImplicit &&
      method.approximation.kind != polynomials::ApproximationKind::kLagrange) {
    throw std::invalid_argument("the implicit scheme's analysis interpolates with Lagrange only");
  }
  const std::size_t n = s.states(), nu = s.couplings(), k_sub = s.state_offset.size() - 1;
  const std::vector<std::vector<bool>> takes = new_value_mask(s, method);
  bool any_new = false, any_old = false;
  for (const auto& row : takes) {
    for (const bool b : row) (b ? any_new : any_old) = true;
  }
  std::array<double, Stencil::kMaxPoints> times{};
  for (std::size_t j = 0; j < times.size(); ++j) times[j] = -static_cast<double>(j) * h;
  const Stencil st = polynomials::make_stencil(method.approximation, method.order, times, h);
  const bool rates = any_old && st.uses_rates;
  if (rates && (s.g * s.b).norm_inf() != 0.0) {
    throw std::invalid_argument("approximation " + method.approximation.name +
                                " needs rates u̇ that contain accelerations here; use a b = 0 "
                                "set");
  }
  const int kappa = method.order;
  const int min_kappa = method.scheme == CoupledScheme::kImplicit ? 1 : 0;
  if (any_new && (kappa < min_kappa || kappa >= static_cast<int>(Stencil::kMaxNodes))) {
    throw std::invalid_argument(
        fmt::format("recurrence: interpolation degree {} out of range ({}..)", kappa, min_kappa));
  }
  // Sequential Gauss–Seidel: a subsystem's own states enter the end values of the laws that read
  // it extrapolated from its past states (GaussSeidelEndValue).
  const bool sequential = method.scheme == CoupledScheme::kGaussSeidel &&
                          method.end_value == GaussSeidelEndValue::kSequential;
  Recurrence r;
  r.couplings = nu;
  r.points = static_cast<std::size_t>(std::max({any_old ? st.points : 0, any_new ? kappa : 0, 1}));
  r.rates = rates;
  r.state_points = sequential && reads_itself(s, takes) ? static_cast<std::size_t>(kappa) : 0;
  r.g = s.g;
  r.a = s.a;
  const std::size_t np = r.points, dim = n + nu * np * (rates ? 2 : 1) + n * r.state_points;
  const detail::StateLayout layout{n, nu, np, rates, r.state_points};
  const auto u_index = [&](std::size_t j, std::size_t c) { return n + j * nu + c; };
  const auto rate_index = [&](std::size_t j, std::size_t c) { return n + nu * np + j * nu + c; };

  const int degree = std::max(any_old ? st.degree : 0, any_new ? kappa : 0);
  const detail::ExactIntegrals in = detail::exact_integrals(s.a, s.b, h, degree);
  const Matrix ext = detail::monomial_map(st.theta, any_old ? st.degree : 0);
  const Matrix itp =
      detail::monomial_map(detail::interpolation_nodes(any_new ? kappa : 0), any_new ? kappa : 0);
  Matrix t(n, dim);  // (I − K_new G) z_{N+1} = t X
  Matrix lhs = Matrix::identity(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) t(i, j) = in.phi(i, j);
  std::vector<std::vector<double>> new_effect, old_effect;  // per node m, on every state
  for (std::size_t c = 0; c < nu; ++c) {
    new_effect.clear();
    old_effect.clear();
    for (int m = 0; any_new && m <= kappa; ++m)
      new_effect.push_back(detail::node_effect(in.integral[c], itp, kappa, m));
    for (int m = 0; any_old && m <= st.degree; ++m)
      old_effect.push_back(detail::node_effect(in.integral[c], ext, st.degree, m));
    for (std::size_t sub = 0; sub < k_sub; ++sub) {
      const std::size_t r0 = s.state_offset[sub], r1 = s.state_offset[sub + 1];
      if (takes[sub][c]) {
        const bool own = sequential && reads(s, c, sub);
        for (int m = 0; m <= kappa; ++m) {
          const std::vector<double>& kv = new_effect[static_cast<std::size_t>(m)];
          if (m == kappa) {  // the new value u_{N+1}
            detail::add_end_value(kv, s.g, c, r0, r1, own ? r0 : 0, own ? r1 : 0, kappa, layout,
                                  lhs, t);
            continue;
          }
          for (std::size_t i = r0; i < r1; ++i)
            t(i, u_index(static_cast<std::size_t>(kappa - 1 - m), c)) += kv[i];
        }
        continue;
      }
      for (int m = 0; m <= st.degree; ++m) {
        const std::vector<double>& kv = old_effect[static_cast<std::size_t>(m)];
        const auto& w = st.w[static_cast<std::size_t>(m)];
        const auto& v = st.v[static_cast<std::size_t>(m)];
        for (std::size_t j = 0; j < static_cast<std::size_t>(st.points); ++j) {
          for (std::size_t i = r0; i < r1; ++i) {
            t(i, u_index(j, c)) += kv[i] * w[j];
            if (rates) t(i, rate_index(j, c)) += kv[i] * v[j] * h;
          }
        }
      }
    }
  }
  r.m = detail::recurrence_matrix(any_new ? solve(lhs, t) : t, s.g, s.a, np, rates, r.state_points);
  return r;
}

MacroStepGrowth macro_step_growth(const LinearCoupledSystem& s, const CoupledMethod& method,
                                  double h) {
  MacroStepGrowth g;
  g.rho = spectral_radius(coupled_recurrence(s, method, h).m);
  g.own = s.states() == 0 ? 1.0 : spectral_radius(expm(h * s.monolithic()));
  return g;
}

std::vector<ScanPoint> coupled_scan(const LinearCoupledSystem& s, const CoupledMethod& method,
                                    double h_min, double h_max, std::size_t count,
                                    double omega_ref) {
  return scan(h_min, h_max, count, omega_ref,
              [&s, &method](double h) { return macro_step_growth(s, method, h).relative(); });
}

StableBand coupled_stable_band(const LinearCoupledSystem& s, const CoupledMethod& method,
                               const std::vector<ScanPoint>& points) {
  return stable_band(
      points, [&s, &method](double h) { return macro_step_growth(s, method, h).relative(); });
}

double fastest_frequency(const LinearCoupledSystem& s) {
  if (s.states() == 0) return 0.0;
  double fastest = 0.0;
  for (const auto& lambda : eigenvalues(s.monolithic()))
    fastest = std::max(fastest, std::abs(lambda));
  return fastest;
}

}  // namespace macrostep::analysis
