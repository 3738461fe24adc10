// The two-mass recurrence matrix and its spectral radius (stability.hpp; METHODS.md §7.1, §7.4).
#include "macrostep/analysis/stability.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "exact_step.hpp"

namespace macrostep::analysis {

namespace {

using detail::interpolation_nodes;
using detail::monomial_map;
using detail::node_effect;
using polynomials::Stencil;

// One subsystem input: coupling variable `coupling` enters ż through column b; `second` marks
// subsystem 2 (the one that interpolates under Gauss–Seidel).
struct Input {
  std::size_t coupling;
  bool second;
  std::array<double, 4> b;
};

struct Split {
  Matrix a{4, 4};  // the subsystems' own dynamics
  Matrix g;        // u = g z
  std::vector<Input> inputs;
};

void set_row(Matrix& m, std::size_t r, std::array<double, 4> v) {
  for (std::size_t j = 0; j < 4; ++j) m(r, j) = v[j];
}

// METHODS §1.2 (Eq. 2.5, 2.6, 2.8) with the 001 subsystem matrices of D-40.
Split split(const TwoMass& p, Decomposition d) {
  Split s;
  s.a(0, 1) = 1.0;
  s.a(1, 0) = -p.c1 / p.m1;
  s.a(1, 1) = -p.d1 / p.m1;
  s.a(2, 3) = 1.0;
  s.a(3, 2) = -p.c2 / p.m2;
  s.a(3, 3) = -p.d2 / p.m2;
  const std::array<double, 4> lambda{-p.cc, -p.dc, p.cc, p.dc};
  switch (d) {
    case Decomposition::kForceForce:
      s.g = Matrix(1, 4);
      set_row(s.g, 0, lambda);
      s.inputs = {{0, false, {0, 1 / p.m1, 0, 0}}, {0, true, {0, 0, 0, -1 / p.m2}}};
      break;
    case Decomposition::kForceDisplacement:
      s.a(3, 2) -= p.cc / p.m2;
      s.a(3, 3) -= p.dc / p.m2;
      s.g = Matrix(3, 4);
      set_row(s.g, 0, lambda);
      set_row(s.g, 1, {1, 0, 0, 0});
      set_row(s.g, 2, {0, 1, 0, 0});
      s.inputs = {{0, false, {0, 1 / p.m1, 0, 0}},
                  {1, true, {0, 0, 0, p.cc / p.m2}},
                  {2, true, {0, 0, 0, p.dc / p.m2}}};
      break;
    case Decomposition::kDisplacementDisplacement:
      s.a(1, 0) -= p.cc / p.m1;
      s.a(1, 1) -= p.dc / p.m1;
      s.a(3, 2) -= p.cc / p.m2;
      s.a(3, 3) -= p.dc / p.m2;
      s.g = Matrix(4, 4);
      set_row(s.g, 0, {0, 0, 1, 0});
      set_row(s.g, 1, {0, 0, 0, 1});
      set_row(s.g, 2, {1, 0, 0, 0});
      set_row(s.g, 3, {0, 1, 0, 0});
      s.inputs = {{0, false, {0, p.cc / p.m1, 0, 0}},
                  {1, false, {0, p.dc / p.m1, 0, 0}},
                  {2, true, {0, 0, 0, p.cc / p.m2}},
                  {3, true, {0, 0, 0, p.dc / p.m2}}};
      break;
  }
  return s;
}

// Does every rate u̇ = G ż avoid the inputs (no accelerations in it)?
bool rates_defined(const Split& s) {
  for (const Input& in : s.inputs) {
    for (std::size_t c = 0; c < s.g.rows(); ++c) {
      double gb = 0.0;
      for (std::size_t i = 0; i < 4; ++i) gb += s.g(c, i) * in.b[i];
      if (gb != 0.0) return false;
    }
  }
  return true;
}

}  // namespace

double TwoMass::omega1() const {
  return std::sqrt(c1 / m1);
}

Decomposition parse_decomposition(std::string_view name) {
  if (name == "ff") return Decomposition::kForceForce;
  if (name == "fd") return Decomposition::kForceDisplacement;
  if (name == "dd") return Decomposition::kDisplacementDisplacement;
  throw std::invalid_argument("unknown decomposition \"" + std::string(name) +
                              "\" (allowed: ff, fd, dd)");
}

Scheme parse_scheme(std::string_view name) {
  if (name == "jacobi") return Scheme::kJacobi;
  if (name == "gauss-seidel") return Scheme::kGaussSeidel;
  throw std::invalid_argument("unknown scheme \"" + std::string(name) +
                              "\" (allowed: jacobi, gauss-seidel)");
}

std::string_view decomposition_name(Decomposition d) {
  switch (d) {
    case Decomposition::kForceForce:
      return "ff";
    case Decomposition::kForceDisplacement:
      return "fd";
    case Decomposition::kDisplacementDisplacement:
      return "dd";
  }
  return "?";
}

std::string_view scheme_name(Scheme s) {
  return s == Scheme::kJacobi ? "jacobi" : "gauss-seidel";
}

Matrix monolithic_matrix(const TwoMass& model) {
  const Split s = split(model, Decomposition::kForceForce);
  Matrix a = s.a;
  for (const Input& in : s.inputs)
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) a(i, j) += in.b[i] * s.g(in.coupling, j);
  return a;
}

Recurrence recurrence(const TwoMass& model, const Method& method, double h) {
  if (!(h > 0.0) || !std::isfinite(h)) throw std::invalid_argument("recurrence: h must be > 0");
  const Split s = split(model, method.decomposition);
  const bool gs = method.scheme == Scheme::kGaussSeidel;
  std::array<double, Stencil::kMaxPoints> times{};
  for (std::size_t j = 0; j < times.size(); ++j) times[j] = -static_cast<double>(j) * h;
  const Stencil st = polynomials::make_stencil(method.approximation, method.order, times, h);
  if (st.uses_rates && !rates_defined(s)) {
    throw std::invalid_argument("approximation " + method.approximation.name +
                                " needs rates u̇ that contain accelerations here (a damped or "
                                "displacement coupling); use a b = 0 set");
  }
  const int kappa_gs = method.order;
  if (gs && (kappa_gs < 0 || kappa_gs >= static_cast<int>(Stencil::kMaxNodes))) {
    throw std::invalid_argument("recurrence: Gauss–Seidel degree out of range");
  }
  // Sequential: subsystem 2's own states (z[2], z[3]) enter the new value extrapolated.
  const bool sequential = gs && method.end_value == GaussSeidelEndValue::kSequential;
  Recurrence r;
  r.couplings = s.g.rows();
  r.points = static_cast<std::size_t>(std::max({st.points, gs ? kappa_gs : 1, 1}));
  r.rates = st.uses_rates;
  r.state_points = sequential ? static_cast<std::size_t>(kappa_gs) : 0;
  r.g = s.g;
  r.a = s.a;
  const std::size_t nu = r.couplings, np = r.points;
  const std::size_t dim = 4 + nu * np * (r.rates ? 2 : 1) + 4 * r.state_points;
  const detail::StateLayout layout{4, nu, np, r.rates, r.state_points};
  const auto u_index = [&](std::size_t j, std::size_t c) { return 4 + j * nu + c; };
  const auto rate_index = [&](std::size_t j, std::size_t c) { return 4 + nu * np + j * nu + c; };

  Matrix b(4, s.inputs.size());
  for (std::size_t k = 0; k < s.inputs.size(); ++k)
    for (std::size_t i = 0; i < 4; ++i) b(i, k) = s.inputs[k].b[i];
  const detail::ExactIntegrals in =
      detail::exact_integrals(s.a, b, h, std::max(st.degree, gs ? kappa_gs : 0));
  const Matrix ext = monomial_map(st.theta, st.degree);
  const Matrix itp = monomial_map(interpolation_nodes(kappa_gs), gs ? kappa_gs : 0);
  Matrix t(4, dim);  // z_{N+1} = (I − K*G)⁻¹ t X
  Matrix lhs = Matrix::identity(4);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) t(i, j) = in.phi(i, j);
  for (std::size_t k = 0; k < s.inputs.size(); ++k) {
    const Input& input = s.inputs[k];
    const auto& integral = in.integral[k];
    if (gs && input.second) {
      for (int m = 0; m <= kappa_gs; ++m) {
        const std::vector<double> kv = node_effect(integral, itp, kappa_gs, m);
        if (m == kappa_gs) {  // the new value u_{N+1} (GaussSeidelEndValue)
          detail::add_end_value(kv, s.g, input.coupling, 0, 4, sequential ? 2 : 0,
                                sequential ? 4 : 0, kappa_gs, layout, lhs, t);
          continue;
        }
        for (std::size_t i = 0; i < 4; ++i)
          t(i, u_index(static_cast<std::size_t>(kappa_gs - 1 - m), input.coupling)) += kv[i];
      }
      continue;
    }
    for (int m = 0; m <= st.degree; ++m) {
      const std::vector<double> kv = node_effect(integral, ext, st.degree, m);
      const auto& w = st.w[static_cast<std::size_t>(m)];
      const auto& v = st.v[static_cast<std::size_t>(m)];
      for (std::size_t j = 0; j < static_cast<std::size_t>(st.points); ++j) {
        for (std::size_t i = 0; i < 4; ++i) {
          t(i, u_index(j, input.coupling)) += kv[i] * w[j];
          if (r.rates) t(i, rate_index(j, input.coupling)) += kv[i] * v[j] * h;
        }
      }
    }
  }
  r.m = detail::recurrence_matrix(solve(lhs, t), s.g, s.a, np, r.rates, r.state_points);
  return r;
}

double spectral_radius(const TwoMass& model, const Method& method, double h) {
  return spectral_radius(recurrence(model, method, h).m);
}

std::vector<ScanPoint> scan(double h_min, double h_max, std::size_t count, double omega_ref,
                            const RhoOfH& rho) {
  if (!(h_min > 0.0) || !(h_max > h_min) || count < 2) {
    throw std::invalid_argument("scan: need 0 < h_min < h_max and at least 2 points");
  }
  std::vector<ScanPoint> out;
  const double ratio = std::log(h_max / h_min) / static_cast<double>(count - 1);
  for (std::size_t i = 0; i < count; ++i) {
    const double h = i + 1 == count ? h_max : h_min * std::exp(ratio * static_cast<double>(i));
    out.push_back({h, h * omega_ref, rho(h)});
  }
  return out;
}

std::vector<ScanPoint> scan(const TwoMass& model, const Method& method, double h_min, double h_max,
                            std::size_t count) {
  return scan(h_min, h_max, count, model.omega1(),
              [&model, &method](double h) { return spectral_radius(model, method, h); });
}

namespace {

// The largest h in [lo, hi) with ρ ≤ 1 + tolerance, by bisection to relative width 1e-6, where
// ρ(lo) is below and ρ(hi) above.
double refine_edge(const RhoOfH& rho, double lo, double hi, double tolerance) {
  while (hi - lo > 1e-6 * lo) {
    const double mid = 0.5 * (lo + hi);
    if (rho(mid) <= 1.0 + tolerance)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// The edge of the band of scan points with ρ ≤ 1 + tolerance that starts at the first point;
// `end` receives the index of the first point outside it (points.size(): none).
std::optional<double> band_edge(const RhoOfH& rho, const std::vector<ScanPoint>& points,
                                double tolerance, std::size_t& end) {
  end = 0;
  while (end < points.size() && points[end].rho <= 1.0 + tolerance) ++end;
  if (end == 0) return std::nullopt;
  if (end == points.size()) return points.back().h;
  return refine_edge(rho, points[end - 1].h, points[end].h, tolerance);
}

// The largest stable scan point, refined towards the next one; the scan's last h if that one is
// stable; nullopt if none is.
std::optional<double> largest_stable(const std::vector<ScanPoint>& points, const RhoOfH& rho) {
  const auto last =
      std::find_if(points.rbegin(), points.rend(), [](const ScanPoint& p) { return p.stable(); });
  if (last == points.rend()) return std::nullopt;
  if (last == points.rbegin()) return points.back().h;
  return refine_edge(rho, last->h, std::prev(last)->h, kStabilityTolerance);
}

RhoOfH rho_of(const TwoMass& model, const Method& method) {
  return [&model, &method](double h) { return spectral_radius(model, method, h); };
}

}  // namespace

std::optional<double> largest_stable_h(const TwoMass& model, const Method& method,
                                       const std::vector<ScanPoint>& points) {
  return largest_stable(points, rho_of(model, method));
}

StableBand stable_band(const std::vector<ScanPoint>& points, const RhoOfH& rho) {
  StableBand band;
  if (points.empty()) return band;
  band.first_rho = points.front().rho;
  std::size_t strict_end = 0, weak_end = 0;
  band.edge_h = band_edge(rho, points, kStabilityTolerance, strict_end);
  band.weak_edge_h = band_edge(rho, points, kWeakGrowth, weak_end);
  band.weak_growth = weak_end > strict_end;
  std::size_t last = points.size();  // one past the largest stable point (weak growth counted)
  while (last > 0 && points[last - 1].rho > 1.0 + kWeakGrowth) --last;
  band.gaps = last > weak_end;
  for (std::size_t i = weak_end; i < last; ++i)
    band.gap_rho = std::max(band.gap_rho, points[i].rho);
  band.largest_h = largest_stable(points, rho);
  return band;
}

StableBand stable_band(const TwoMass& model, const Method& method,
                       const std::vector<ScanPoint>& points) {
  return stable_band(points, rho_of(model, method));
}

}  // namespace macrostep::analysis
