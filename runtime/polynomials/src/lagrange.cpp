#include "macrostep/polynomials/lagrange.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace macrostep::polynomials {

namespace {

void check_node_count(std::size_t n, const char* who) {
  if (n == 0 || n > kMaxLagrangeNodes) {
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(n) +
                                " nodes (allowed 1.." + std::to_string(kMaxLagrangeNodes) + ")");
  }
}

}  // namespace

void lagrange_basis(std::span<const double> nodes, double t, std::span<double> basis) {
  const std::size_t n = nodes.size();
  check_node_count(n, "lagrange_basis");
  if (basis.size() != n) throw std::invalid_argument("lagrange_basis: basis size != node count");
  for (std::size_t m = 0; m < n; ++m) {
    double b = 1.0;
    for (std::size_t k = 0; k < n; ++k) {
      if (k != m) b *= (t - nodes[k]) / (nodes[m] - nodes[k]);
    }
    basis[m] = b;
  }
}

void lagrange_basis_derivative(std::span<const double> nodes, double t,
                               std::span<double> derivative) {
  const std::size_t n = nodes.size();
  check_node_count(n, "lagrange_basis_derivative");
  if (derivative.size() != n) {
    throw std::invalid_argument("lagrange_basis_derivative: derivative size != node count");
  }
  for (std::size_t m = 0; m < n; ++m) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == m) continue;
      double term = 1.0 / (nodes[m] - nodes[i]);
      for (std::size_t k = 0; k < n; ++k) {
        if (k != m && k != i) term *= (t - nodes[k]) / (nodes[m] - nodes[k]);
      }
      sum += term;
    }
    derivative[m] = sum;
  }
}

double lagrange_value(std::span<const double> nodes, std::span<const double> values, double t) {
  if (values.size() != nodes.size()) {
    throw std::invalid_argument("lagrange_value: value count != node count");
  }
  std::array<double, kMaxLagrangeNodes> basis{};
  lagrange_basis(nodes, t, std::span<double>(basis.data(), nodes.size()));
  double p = 0.0;
  for (std::size_t m = 0; m < nodes.size(); ++m) p += values[m] * basis[m];
  return p;
}

double divided_difference(std::span<const double> nodes, std::span<const double> values) {
  const std::size_t n = nodes.size();
  check_node_count(n, "divided_difference");
  if (values.size() != n) throw std::invalid_argument("divided_difference: size mismatch");
  // Newton's table in place: after level j, d[i] = w[t_i, …, t_{i+j}].
  std::array<double, kMaxLagrangeNodes> d{};
  for (std::size_t i = 0; i < n; ++i) d[i] = values[i];
  for (std::size_t j = 1; j < n; ++j) {
    for (std::size_t i = 0; i + j < n; ++i) {
      d[i] = (d[i + 1] - d[i]) / (nodes[i + j] - nodes[i]);
    }
  }
  return d[0];
}

void uniform_extrapolation_weights(int kappa, std::span<double> weights) {
  if (kappa < 0 || static_cast<std::size_t>(kappa) + 1 != weights.size()) {
    throw std::invalid_argument("uniform_extrapolation_weights: need kappa >= 0, kappa+1 weights");
  }
  // C(κ+1, i+1) by the multiplicative recurrence (exact in double for κ ≤ 60).
  double binom = 1.0;  // C(κ+1, 0)
  for (int i = 0; i <= kappa; ++i) {
    binom = binom * static_cast<double>(kappa + 1 - i) / static_cast<double>(i + 1);
    weights[static_cast<std::size_t>(i)] = (i % 2 == 0) ? binom : -binom;
  }
}

}  // namespace macrostep::polynomials
