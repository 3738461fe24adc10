// The heun interface Jacobian (heun.hpp; seed 004 Eq. 49/50, METHODS.md §8).
#include "macrostep/corrector/heun.hpp"

#include <fmt/format.h>
#include <sundials/sundials_dense.h>

#include <stdexcept>

namespace macrostep::corrector {

namespace {

// Dense column-major n × n matrix of the subsystem's ∂F/∂z + cj ∂F/∂ż.
std::vector<double> dense_jacobian(const model::Subsystem& s, double t, std::span<const double> z,
                                   std::span<const double> u, double cj) {
  const std::size_t n = s.state_size();
  const model::SparsityPattern& p = s.jacobian_pattern();
  std::vector<double> zp(n, 0.0), values(p.nonzeros()), a(n * n, 0.0);
  s.jacobian(t, z, zp, u, cj, values);
  for (std::size_t c = 0; c < n; ++c) {
    for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
      const auto e = static_cast<std::size_t>(k);
      a[c * n + static_cast<std::size_t>(p.row_index[e])] = values[e];
    }
  }
  return a;
}

}  // namespace

HeunSensitivities::HeunSensitivities(const system::CoupledSystem& system) : system_(system) {
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    if (system.subsystem(i).has_feedthrough()) {
      throw std::invalid_argument(
          fmt::format("the heun Jacobian integrates states only and misses subsystem {}'s direct "
                      "feed-through; use the fd Jacobian",
                      i + 1));
    }
  }
}

void HeunSensitivities::state_sensitivity(std::size_t i, double t, double h, bool constant_inputs,
                                          std::span<const double> z, std::span<const double> u,
                                          std::vector<double>& dzds) const {
  const model::Subsystem& s = system_.subsystem(i);
  const std::size_t n = s.state_size(), m = s.input_size();
  std::vector<double> fz = dense_jacobian(s, t, z, u, 0.0);  // ∂F/∂z
  std::vector<double> mass = dense_jacobian(s, t, z, u, 1.0);
  for (std::size_t k = 0; k < mass.size(); ++k) mass[k] -= fz[k];  // ∂F/∂ż
  // ∂F/∂u, dense column-major n × m.
  const model::EntryPattern ip = s.input_jacobian_pattern();
  std::vector<double> values(ip.nonzeros()), zp(n, 0.0), fu(n * m, 0.0);
  s.input_jacobian(t, z, zp, u, values);
  for (std::size_t k = 0; k < values.size(); ++k) fu[ip.column[k] * n + ip.row[k]] += values[k];

  // f_u = −M⁻¹ ∂F/∂u and f_z·f_u = −M⁻¹ (∂F/∂z · f_u): m solves with SUNDIALS' dense LU of M,
  // never the n × n f_z itself.
  std::vector<realtype*> columns(n);
  for (std::size_t c = 0; c < n; ++c) columns[c] = mass.data() + c * n;
  std::vector<sunindextype> pivots(n);
  if (SUNDlsMat_denseGETRF(columns.data(), static_cast<sunindextype>(n),
                           static_cast<sunindextype>(n), pivots.data()) != 0) {
    throw std::runtime_error(fmt::format(
        "the heun Jacobian needs an ODE subsystem, and subsystem {} has a singular ∂F/∂ż (a "
        "DAE); use the fd Jacobian",
        i + 1));
  }
  const auto solve_negated = [&](std::vector<double>& b) {
    for (std::size_t c = 0; c < m; ++c) {
      SUNDlsMat_denseGETRS(columns.data(), static_cast<sunindextype>(n), pivots.data(),
                           b.data() + c * n);
    }
    for (double& v : b) v = -v;
  };
  solve_negated(fu);
  const double l = constant_inputs ? 1.0 : 0.0;
  std::vector<double> fzfu(n * m, 0.0);
  if (l != 0.0) {
    for (std::size_t c = 0; c < m; ++c) {
      for (std::size_t k = 0; k < n; ++k) {
        const double f = fu[c * n + k];
        if (f == 0.0) continue;
        for (std::size_t r = 0; r < n; ++r) fzfu[c * n + r] += fz[k * n + r] * f;
      }
    }
    solve_negated(fzfu);
  }
  // ∂z/∂s = H/2 (1 + ℓ_N) f_u + H²/2 ℓ_N f_z f_u.
  dzds.assign(n * m, 0.0);
  for (std::size_t k = 0; k < n * m; ++k) {
    dzds[k] = 0.5 * h * (1.0 + l) * fu[k] + 0.5 * h * h * l * fzfu[k];
  }
}

void HeunSensitivities::fill(double t, double h, bool constant_inputs,
                             std::span<const std::vector<double>> states,
                             std::span<const std::vector<double>> inputs,
                             InputSensitivities& dyds) const {
  std::vector<double> dzds;
  for (std::size_t i = 0; i < system_.subsystem_count(); ++i) {
    const model::Subsystem& s = system_.subsystem(i);
    const std::size_t n = s.state_size(), m = s.input_size();
    state_sensitivity(i, t, h, constant_inputs, states[i], inputs[i], dzds);
    const model::EntryPattern op = s.output_jacobian_pattern();
    std::vector<double> values(op.nonzeros());
    s.output_jacobian(t, states[i], inputs[i], values);
    for (std::size_t o = 0; o < s.output_size(); ++o) {
      for (std::size_t c = 0; c < m; ++c) dyds.at(i, o, c) = 0.0;
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      for (std::size_t c = 0; c < m; ++c) {
        dyds.at(i, op.row[k], c) += values[k] * dzds[c * n + op.column[k]];
      }
    }
  }
}

}  // namespace macrostep::corrector
