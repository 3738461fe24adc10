#include "exact_step.hpp"

#include <span>
#include <stdexcept>

#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::analysis::detail {

ExactIntegrals exact_integrals(const Matrix& a, const Matrix& b, double h, int max_degree) {
  const std::size_t n = a.rows(), inputs = b.cols();
  const std::size_t chain = static_cast<std::size_t>(max_degree) + 1;
  const std::size_t dim = n + inputs * chain;
  Matrix aug(dim, dim);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) aug(i, j) = a(i, j) * h;
  for (std::size_t k = 0; k < inputs; ++k) {
    const std::size_t base = n + k * chain;
    for (std::size_t i = 0; i < n; ++i) aug(i, base) = b(i, k) * h;
    for (std::size_t q = 0; q + 1 < chain; ++q) aug(base + q, base + q + 1) = 1.0;
  }
  const Matrix e = expm(aug);
  ExactIntegrals r;
  r.phi = Matrix(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) r.phi(i, j) = e(i, j);
  r.integral.assign(inputs, std::vector<std::vector<double>>(chain, std::vector<double>(n)));
  for (std::size_t k = 0; k < inputs; ++k) {
    double factorial = 1.0;
    for (std::size_t p = 0; p < chain; ++p) {
      if (p > 0) factorial *= static_cast<double>(p);
      for (std::size_t i = 0; i < n; ++i)
        r.integral[k][p][i] = factorial * e(i, n + k * chain + p);  // s^p/p! → s^p
    }
  }
  return r;
}

Matrix monomial_map(const std::array<double, polynomials::Stencil::kMaxNodes>& theta, int degree) {
  const std::size_t n = static_cast<std::size_t>(degree) + 1;
  Matrix v(n, n);
  for (std::size_t m = 0; m < n; ++m) {
    double pw = 1.0;
    for (std::size_t p = 0; p < n; ++p, pw *= theta[m]) v(m, p) = pw;
  }
  return solve(v, Matrix::identity(n));
}

std::array<double, polynomials::Stencil::kMaxNodes> interpolation_nodes(int kappa) {
  std::array<double, polynomials::Stencil::kMaxNodes> theta{};
  for (int m = 0; m <= kappa; ++m)
    theta[static_cast<std::size_t>(m)] = m == kappa ? 1.0 : m - kappa + 1.0;
  return theta;
}

std::vector<double> node_effect(const std::vector<std::vector<double>>& integral,
                                const Matrix& coef, int degree, int m) {
  std::vector<double> kv(integral.empty() ? 0 : integral[0].size(), 0.0);
  for (int p = 0; p <= degree; ++p) {
    const double c = coef(static_cast<std::size_t>(p), static_cast<std::size_t>(m));
    const auto& col = integral[static_cast<std::size_t>(p)];
    for (std::size_t i = 0; i < kv.size(); ++i) kv[i] += col[i] * c;
  }
  return kv;
}

Matrix recurrence_matrix(const Matrix& tz, const Matrix& g, const Matrix& a, std::size_t points,
                         bool rates, std::size_t state_points) {
  const std::size_t n = tz.rows(), nu = g.rows(), dim = tz.cols();
  const auto u_index = [&](std::size_t j, std::size_t c) { return n + j * nu + c; };
  const auto rate_index = [&](std::size_t j, std::size_t c) {
    return n + nu * points + j * nu + c;
  };
  const Matrix tu = g * tz;
  const Matrix trate = rates ? g * (a * tz) : Matrix();
  Matrix m(dim, dim);
  for (std::size_t j = 0; j < dim; ++j) {
    for (std::size_t i = 0; i < n; ++i) m(i, j) = tz(i, j);
    for (std::size_t c = 0; c < nu; ++c) {
      m(u_index(0, c), j) = tu(c, j);
      if (rates) m(rate_index(0, c), j) = trate(c, j);
    }
  }
  for (std::size_t jj = 1; jj < points; ++jj) {  // the history shifts by one point
    for (std::size_t c = 0; c < nu; ++c) {
      m(u_index(jj, c), u_index(jj - 1, c)) = 1.0;
      if (rates) m(rate_index(jj, c), rate_index(jj - 1, c)) = 1.0;
    }
  }
  for (std::size_t jj = 1; jj <= state_points; ++jj) {  // z_{N+1−jj} ← z_{N+2−jj}
    for (std::size_t i = 0; i < n; ++i) {
      m(past_state_index(n, nu, points, rates, jj, i),
        past_state_index(n, nu, points, rates, jj - 1, i)) = 1.0;
    }
  }
  return m;
}

void add_end_value(const std::vector<double>& kv, const Matrix& g, std::size_t c, std::size_t r0,
                   std::size_t r1, std::size_t own0, std::size_t own1, int kappa,
                   const StateLayout& x, Matrix& lhs, Matrix& t) {
  std::array<double, polynomials::Stencil::kMaxNodes> w{};  // w[p] multiplies z_{N−p}
  if (own1 > own0) {
    if (kappa < 0 || static_cast<std::size_t>(kappa) >= w.size() ||
        static_cast<std::size_t>(kappa) > x.state_points) {
      throw std::invalid_argument("add_end_value: too few past states for the extrapolation");
    }
    polynomials::uniform_extrapolation_weights(
        kappa, std::span(w.data(), static_cast<std::size_t>(kappa) + 1));
  }
  for (std::size_t j = 0; j < x.n; ++j) {
    const double gj = g(c, j);
    if (gj == 0.0) continue;
    const bool own = j >= own0 && j < own1;
    for (std::size_t i = r0; i < r1; ++i) {
      if (!own) {
        lhs(i, j) -= kv[i] * gj;
        continue;
      }
      for (int p = 0; p <= kappa; ++p) {
        const auto pp = static_cast<std::size_t>(p);
        t(i, past_state_index(x.n, x.nu, x.points, x.rates, pp, j)) += kv[i] * gj * w[pp];
      }
    }
  }
}

}  // namespace macrostep::analysis::detail
