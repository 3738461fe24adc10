// Lagrange polynomials and divided differences on non-uniform grids (METHODS §2.1).
//
// Nodes are the actual macro-time points; no variable-step correction is applied. All
// functions are pure, allocation-free and deterministic: the same arguments give bit-identical
// results on every call. Nodes must be pairwise distinct (callers pass strictly increasing
// macro times); evaluation outside the nodes is extrapolation.
#pragma once

#include <cstddef>
#include <span>

namespace macrostep::polynomials {

// Largest number of nodes the free functions below accept (a work array of this size lives on
// the stack). Enough for κ_max + 3 = 8 SDN points and for least-squares fits of up to 32 points.
inline constexpr std::size_t kMaxLagrangeNodes = 32;

// basis[m] = ℓ_m(t) = Π_{n≠m} (t − t_n)/(t_m − t_n), product-of-ratios form; ℓ_0 ≡ 1 for a
// single node. basis.size() must equal nodes.size() (1..kMaxLagrangeNodes).
void lagrange_basis(std::span<const double> nodes, double t, std::span<double> basis);

// derivative[m] = ℓ'_m(t) = Σ_{i≠m} 1/(t_m − t_i)·Π_{n≠m,i} (t − t_n)/(t_m − t_n), valid at the
// nodes too; 0 for a single node. derivative.size() must equal nodes.size().
void lagrange_basis_derivative(std::span<const double> nodes, double t,
                               std::span<double> derivative);

// P(t) = Σ_m values[m]·ℓ_m(t), the polynomial of degree nodes.size() − 1 through the points.
double lagrange_value(std::span<const double> nodes, std::span<const double> values, double t);

// The divided difference w[t_0, …, t_n] of order n = nodes.size() − 1 (w[t_0] = w_0). It is
// symmetric in its arguments; j!·w[t_0..t_j] is the j-th derivative of the interpolant.
double divided_difference(std::span<const double> nodes, std::span<const double> values);

// Uniform one-step extrapolation weights (METHODS §2.1): weights[i] multiplies u_{N−i},
// weights[i] = (−1)^i·C(κ+1, i+1), i = 0..κ. weights.size() must be κ+1.
void uniform_extrapolation_weights(int kappa, std::span<double> weights);

}  // namespace macrostep::polynomials
