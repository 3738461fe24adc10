// What the integrator does where its input jumps: the consistent derivative z' for the new
// input, the history shift that keeps the BDF order where the polynomial jumps (METHODS §2.2), and
// the restart.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "integrator_impl.hpp"

namespace macrostep::ida {

namespace {

// The largest span·|λ| over which shift_history() moves the history (see there). Measured
// (docs/results/2026-11-27-jump-policy.md): without a limit the shift made S-5.4b restructured
// at κ = 5 40× less accurate than keeping the history; limits of 0.3 to 4 all repair that, and
// the larger ones keep more of the shift's gain on S-5.8 (1 gives 1.28× the resolved error there,
// 2 1.07×); K-5.1 does not reach the limit.
constexpr double kShiftStiffness = 2.0;

// Solves the dense system A·X = B in place (A: size×size row-major, B: size×cols row-major) by
// Gaussian elimination with partial pivoting; for the few small systems of shift_history.
void solve_small(std::vector<double>& a, std::vector<double>& b, std::size_t size,
                 std::size_t cols) {
  for (std::size_t k = 0; k < size; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < size; ++i) {
      if (std::abs(a[i * size + k]) > std::abs(a[piv * size + k])) piv = i;
    }
    if (piv != k) {
      for (std::size_t j = 0; j < size; ++j) std::swap(a[k * size + j], a[piv * size + j]);
      for (std::size_t j = 0; j < cols; ++j) std::swap(b[k * cols + j], b[piv * cols + j]);
    }
    for (std::size_t i = k + 1; i < size; ++i) {
      const double f = a[i * size + k] / a[k * size + k];
      for (std::size_t j = k; j < size; ++j) a[i * size + j] -= f * a[k * size + j];
      for (std::size_t j = 0; j < cols; ++j) b[i * cols + j] -= f * b[k * cols + j];
    }
  }
  for (std::size_t k = size; k-- > 0;) {
    for (std::size_t j = 0; j < cols; ++j) {
      double v = b[k * cols + j];
      for (std::size_t i = k + 1; i < size; ++i) v -= a[k * size + i] * b[i * cols + j];
      b[k * cols + j] = v / a[k * size + k];
    }
  }
}

}  // namespace

void Integrator::Impl::current_state(std::span<double> z, std::span<double> zp) const {
  if (algebraic()) return;
  IDAMem m = ida();
  if (m->ida_nst == 0) {
    // Before the first step phi[0] = y0 and phi[1] = y'0 (IDASolve scales it by h later).
    std::memcpy(z.data(), N_VGetArrayPointer(m->ida_phi[0]), n * sizeof(double));
    std::memcpy(zp.data(), N_VGetArrayPointer(m->ida_phi[1]), n * sizeof(double));
    return;
  }
  interpolate(now(), z, zp);
}

void Integrator::Impl::derivative_jacobians(double t, std::span<const double> z,
                                            std::span<const double> zp) const {
  const std::size_t nnz = pattern->nonzeros();
  zp_matrix.resize(nnz);
  zp_j0.resize(nnz);
  auto& self = const_cast<Impl&>(*this);  // the input scratch u only
  self.evaluate_input(t);
  model().jacobian(t, z, zp, u, 1.0, zp_matrix);
  model().jacobian(t, z, zp, u, 0.0, zp_j0);
  tick();
  for (std::size_t k = 0; k < nnz; ++k) zp_matrix[k] -= zp_j0[k];
}

bool Integrator::Impl::zero_dfdzp_column(std::size_t c) const {
  const auto& p = *pattern;
  for (auto q = p.column_start[c]; q < p.column_start[c + 1]; ++q) {
    if (zp_matrix[static_cast<std::size_t>(q)] != 0.0) return false;
  }
  return true;
}

klu_l_numeric* Integrator::Impl::factor_dfdzp(double t) const {
  const auto& p = *pattern;
  if (invert_diagonal_dfdzp()) return nullptr;
  auto* cp = const_cast<SuiteSparse_long*>(
      reinterpret_cast<const SuiteSparse_long*>(p.column_start.data()));
  auto* ri =
      const_cast<SuiteSparse_long*>(reinterpret_cast<const SuiteSparse_long*>(p.row_index.data()));
  if (!zp_symbolic) {
    klu_l_defaults(&zp_common);
    zp_symbolic = klu_l_analyze(static_cast<SuiteSparse_long>(n), cp, ri, &zp_common);
  }
  // dF/dz' is often constant (a mass matrix): the factorization of equal values is kept.
  if (zp_numeric != nullptr && zp_factored == zp_matrix) return zp_numeric;
  if (zp_numeric != nullptr) klu_l_free_numeric(&zp_numeric, &zp_common);
  zp_factored.clear();
  klu_l_numeric* num =
      zp_symbolic ? klu_l_factor(cp, ri, zp_matrix.data(), zp_symbolic, &zp_common) : nullptr;
  if (!num || zp_common.status != KLU_OK) {
    if (num) klu_l_free_numeric(&num, &zp_common);
    throw IntegrationError(fmt::format("dF/dz' is singular at t = {:.9g}", t), t, IDA_LSETUP_FAIL);
  }
  zp_numeric = num;
  zp_factored = zp_matrix;
  return num;
}

// A diagonal dF/dz' (point masses, an explicit ODE: the usual case) is inverted entry by entry:
// a KLU solve per Taylor term of shift_history() cost as much as the integration itself on
// subsystems of thousands of states.
bool Integrator::Impl::invert_diagonal_dfdzp() const {
  const auto& p = *pattern;
  zp_diagonal_inverse.assign(n, 0.0);
  for (std::size_t c = 0; c < n; ++c) {
    for (auto q = p.column_start[c]; q < p.column_start[c + 1]; ++q) {
      const auto k = static_cast<std::size_t>(q);
      if (static_cast<std::size_t>(p.row_index[k]) == c) {
        zp_diagonal_inverse[c] = zp_matrix[k] != 0.0 ? 1.0 / zp_matrix[k] : 0.0;
      } else if (zp_matrix[k] != 0.0) {
        zp_diagonal_inverse.clear();
        return false;
      }
    }
    if (zp_diagonal_inverse[c] == 0.0) {  // singular: the factorization says so
      zp_diagonal_inverse.clear();
      return false;
    }
  }
  return true;
}

void Integrator::Impl::solve_dfdzp(klu_l_numeric* num, double* rhs) const {
  if (!zp_diagonal_inverse.empty()) {
    for (std::size_t i = 0; i < n; ++i) rhs[i] *= zp_diagonal_inverse[i];
    return;
  }
  klu_l_solve(zp_symbolic, num, static_cast<SuiteSparse_long>(n), 1, rhs, &zp_common);
}

// An algebraic state (a zero column of dF/dz': a coupling variable of a monolithic system) keeps
// its z': its diagonal entry takes 1, and its equation, consistent at z, has no residual to move
// the others with. Without zero columns this is the plain Newton step on dF/dz'.
void Integrator::Impl::consistent_derivative(double t, std::span<const double> z,
                                             std::span<double> zp) const {
  derivative_jacobians(t, z, zp);
  const auto& p = *pattern;
  for (std::size_t c = 0; c < n; ++c) {
    if (!zero_dfdzp_column(c)) continue;
    for (auto q = p.column_start[c]; q < p.column_start[c + 1]; ++q) {
      const auto k = static_cast<std::size_t>(q);
      if (static_cast<std::size_t>(p.row_index[k]) == c) zp_matrix[k] = 1.0;
    }
  }
  klu_l_numeric* num = factor_dfdzp(t);
  zp_rhs.resize(n);
  model().residual(t, z, zp, u, zp_rhs);
  solve_dfdzp(num, zp_rhs.data());
  for (std::size_t i = 0; i < n; ++i) zp[i] -= zp_rhs[i];
}

void Integrator::Impl::shift_history(const model::InputFunction& previous) {
  IDAMem m = ida();
  const int k = m->ida_kused;
  if (m->ida_nst == 0 || k < 1 || nu == 0 || !input) return;
  const double t = m->ida_tn;
  zp_z.resize(2 * n);
  std::span<double> z(zp_z.data(), n), zp(zp_z.data() + n, n);
  current_state(z, zp);
  derivative_jacobians(t, z, zp);
  // An algebraic state (a zero column of dF/dz': a DAE, such as a plugin's constraint force) has
  // no derivative to shift the history along: the jump is kept, as jump_handling = "keep" does,
  // and IDA's error test takes it.
  for (std::size_t c = 0; c < n; ++c) {
    if (zero_dfdzp_column(c)) return;
  }
  klu_l_numeric* num = factor_dfdzp(t);
  if (!ju_pattern)
    ju_pattern = std::make_unique<model::EntryPattern>(model().input_jacobian_pattern());
  const model::EntryPattern& ju = *ju_pattern;
  ju_values.resize(ju.nonzeros());
  shift_u_new.resize(nu);
  shift_u_old.resize(nu);
  model().input_jacobian(t, z, zp, u, ju_values);
  // δ' = −(dF/dz')⁻¹ (dF/dz δ + dF/du Δu), Δu = new input − previous input, δ(0) = 0, as a
  // Taylor series in σ = s/span over the history span [−span, 0]: Δu is a polynomial of degree
  // <= D (the larger of both inputs' degrees, SupportPoints::kMaxDegree when one does not say;
  // coefficients d_j from D + 1 samples), and δ has coefficients
  // c_{j+1} = −span·(dF/dz')⁻¹ (dF/dz c_j + dF/du d_j)/(j + 1), kept to degree D + 3 (two
  // integrations beyond Δu and one more for the homogeneous part).
  const auto ku = static_cast<std::size_t>(k);
  const double span = m->ida_psi[ku - 1];
  const int d_new = input->polynomial_degree(), d_old = previous.polynomial_degree();
  const std::size_t kD = d_new < 0 || d_old < 0
                             ? model::SupportPoints::kMaxDegree
                             : static_cast<std::size_t>(std::max({d_new, d_old, 1}));
  const std::size_t kTerms = kD + 3;
  shift_vand.assign((kD + 1) * (kD + 1), 0.0);
  shift_du.assign((kD + 1) * nu, 0.0);  // shift_du[j * nu + c] = d_j
  for (std::size_t i = 0; i <= kD; ++i) {
    const double sigma = -static_cast<double>(i) / static_cast<double>(kD);
    input->evaluate(t + sigma * span, shift_u_new);
    previous.evaluate(t + sigma * span, shift_u_old);
    double pw = 1.0;
    for (std::size_t j = 0; j <= kD; ++j, pw *= sigma) shift_vand[i * (kD + 1) + j] = pw;
    for (std::size_t c = 0; c < nu; ++c) shift_du[i * nu + c] = shift_u_new[c] - shift_u_old[c];
  }
  solve_small(shift_vand, shift_du, kD + 1, nu);
  const auto& p = *pattern;
  shift_coef.assign((kTerms + 1) * n, 0.0);  // row j: the coefficient c_j
  for (std::size_t j = 0; j < kTerms; ++j) {
    const double* in = shift_coef.data() + j * n;
    double* out = shift_coef.data() + (j + 1) * n;
    for (std::size_t c = 0; c < n; ++c) {
      for (auto q = p.column_start[c]; q < p.column_start[c + 1]; ++q) {
        out[static_cast<std::size_t>(p.row_index[static_cast<std::size_t>(q)])] +=
            zp_j0[static_cast<std::size_t>(q)] * in[c];
      }
    }
    if (j <= kD) {
      for (std::size_t q = 0; q < ju.nonzeros(); ++q) {
        out[ju.row[q]] += ju_values[q] * shift_du[j * nu + ju.column[q]];
      }
    }
    solve_dfdzp(num, out);
    for (std::size_t r = 0; r < n; ++r) out[r] *= -span / static_cast<double>(j + 1);
  }
  // The terms beyond D + 1 come from the homogeneous part alone: the ratio of the last two
  // estimates span·|λ| of the modes δ excites. Where that exceeds kShiftStiffness the history
  // cannot be shifted: with δ(0) = 0 fixed, a mode decaying faster than the span grows backwards
  // like e^{span·|λ|} (the past that would lead to today's state under the new input is far
  // from the one that did), and the truncated series does not describe it either. Such a jump
  // is kept as it is (JumpPolicy::kKeep for this step).
  const double* ewt = N_VGetArrayPointer(m->ida_ewt);
  const auto weighted = [&](const double* c) {
    double sum = 0.0;
    for (std::size_t r = 0; r < n; ++r) sum += (c[r] * ewt[r]) * (c[r] * ewt[r]);
    return std::sqrt(sum);
  };
  const double last = weighted(shift_coef.data() + kTerms * n),
               before = weighted(shift_coef.data() + (kTerms - 1) * n);
  if (before == 0.0) return;  // Δu ≡ 0: nothing to shift
  if (static_cast<double>(kTerms) * last > kShiftStiffness * before) return;
  // δ at the history's nodes s_i = −psi[i−1] (Horner).
  shift_dd.assign((ku + 1) * n, 0.0);
  shift_node.assign(ku + 1, 0.0);
  for (std::size_t i = 1; i <= ku; ++i) {
    shift_node[i] = -m->ida_psi[i - 1];
    const double sigma = shift_node[i] / span;
    double* di = shift_dd.data() + i * n;
    for (std::size_t j = kTerms; j >= 1; --j) {
      const double* cj = shift_coef.data() + j * n;
      for (std::size_t r = 0; r < n; ++r) di[r] = di[r] * sigma + cj[r];
    }
    for (std::size_t r = 0; r < n; ++r) di[r] *= sigma;
  }
  // Newton divided differences δ[s_0..s_j]; phi[j] holds (Π_{i<j} psi[i])·y[s_0..s_j].
  for (std::size_t l = 1; l <= ku; ++l) {
    for (std::size_t i = ku; i >= l; --i) {
      for (std::size_t r = 0; r < n; ++r) {
        shift_dd[i * n + r] =
            (shift_dd[i * n + r] - shift_dd[(i - 1) * n + r]) / (shift_node[i] - shift_node[i - l]);
      }
    }
  }
  double scale = 1.0;
  for (std::size_t j = 1; j <= ku; ++j) {
    scale *= m->ida_psi[j - 1];
    double* phi = N_VGetArrayPointer(m->ida_phi[j]);
    for (std::size_t r = 0; r < n; ++r) phi[r] += scale * shift_dd[j * n + r];
  }
}

void Integrator::Impl::restart() {
  const double t = ida()->ida_tn;
  zp_z.resize(2 * n);
  std::span<double> z(zp_z.data(), n), zp(zp_z.data() + n, n);
  current_state(z, zp);
  consistent_derivative(ida()->ida_tn, z, zp);
  std::memcpy(N_VGetArrayPointer(yy), z.data(), n * sizeof(double));
  std::memcpy(N_VGetArrayPointer(yp), zp.data(), n * sizeof(double));
  reinitialize(t);
}

void Integrator::consistent_derivative(std::span<double> zp) const {
  auto& I = *impl_;
  if (zp.size() != I.n) throw std::invalid_argument("consistent_derivative: span size");
  if (I.algebraic()) return;
  I.zp_z.resize(2 * I.n);
  std::span<double> z(I.zp_z.data(), I.n), zh(I.zp_z.data() + I.n, I.n);
  I.current_state(z, zh);
  std::copy(zh.begin(), zh.end(), zp.begin());
  I.consistent_derivative(I.now(), z, zp);
}

double Integrator::input_jump_norm() const {
  auto& I = *impl_;
  if (I.algebraic()) return 0.0;
  IDAMem m = I.ida();
  if (m->ida_nst == 0) return 0.0;
  I.zp_z.resize(3 * I.n);
  std::span<double> z(I.zp_z.data(), I.n), zh(I.zp_z.data() + I.n, I.n),
      zc(I.zp_z.data() + 2 * I.n, I.n);
  I.current_state(z, zh);
  std::copy(zh.begin(), zh.end(), zc.begin());
  I.consistent_derivative(I.now(), z, zc);
  const double* w = N_VGetArrayPointer(m->ida_ewt);
  double sum = 0.0;
  for (std::size_t i = 0; i < I.n; ++i) {
    const double e = m->ida_hh * (zc[i] - zh[i]) * w[i];
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(I.n));
}

}  // namespace macrostep::ida
