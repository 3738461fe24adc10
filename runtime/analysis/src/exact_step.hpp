// The pieces of a macro step with exactly integrated linear subsystems that the two-mass
// recurrence (stability.cpp) and the described-system recurrence (coupled_stability.cpp) share
// (METHODS §7.1, D-37). Private to runtime/analysis.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "macrostep/analysis/dense.hpp"
#include "macrostep/polynomials/approximation.hpp"

namespace macrostep::analysis::detail {

// e^{Ah} and, for every column b_c of B, integral[c][p] = ∫_0^h e^{A(h−τ)} b_c (τ/h)^p dτ for
// p ≤ max_degree, from one exponential of the augmented matrix [[A h, B h, 0], [0, shift]] in
// s = τ/h (Van Loan).
struct ExactIntegrals {
  Matrix phi;
  std::vector<std::vector<std::vector<double>>> integral;  // [c][p][i]
};
ExactIntegrals exact_integrals(const Matrix& a, const Matrix& b, double h, int max_degree);

// Monomial coefficients of a polynomial through nodes θ_0..θ_degree: coef(p, m) maps node value m
// to the coefficient of θ^p (the inverse Vandermonde matrix).
Matrix monomial_map(const std::array<double, polynomials::Stencil::kMaxNodes>& theta, int degree);

// Lagrange interpolation of degree κ through T_{N−κ+1}..T_N (history j = κ−1−m at node m) and
// T_{N+1} (the new value, node κ) on the uniform grid, in θ = (t − T_N)/H.
std::array<double, polynomials::Stencil::kMaxNodes> interpolation_nodes(int kappa);

// Σ_p integral[p] · coef(p, m): the effect on z_{N+1} of node value m of one input channel.
std::vector<double> node_effect(const std::vector<std::vector<double>>& integral,
                                const Matrix& coef, int degree, int m);

// The recurrence matrix of X = [z; u_N, u_{N−1}, …; u̇_N, u̇_{N−1}, …; z_{N−1}, …] (`points` past
// values, the rates when `rates`, `state_points` past states) from z_{N+1} = tz·X:
// u_{N+1} = G z_{N+1}, u̇_{N+1} = G A z_{N+1}, and the histories shifted by one point.
Matrix recurrence_matrix(const Matrix& tz, const Matrix& g, const Matrix& a, std::size_t points,
                         bool rates, std::size_t state_points = 0);

// The layout of X (recurrence_matrix): n states, nu coupling variables with `points` past values
// (and as many rates when `rates`), `state_points` past states.
struct StateLayout {
  std::size_t n = 0, nu = 0, points = 0;
  bool rates = false;
  std::size_t state_points = 0;
};

// The effect of an interpolated input's new end value u_{N+1} = Σ_j g(c, j)·z_j on the rows
// [r0, r1) of z_{N+1}, kv[i] per unit of it: states j in [own0, own1) (the later subsystem's own,
// sequential Gauss–Seidel) enter at their Lagrange extrapolation of degree κ to T_{N+1} through
// z_{N−κ} … z_N (in t, from X); the others at z_{N+1} itself (in lhs, solved for). own0 = own1:
// every state at z_{N+1}.
void add_end_value(const std::vector<double>& kv, const Matrix& g, std::size_t c, std::size_t r0,
                   std::size_t r1, std::size_t own0, std::size_t own1, int kappa,
                   const StateLayout& x, Matrix& lhs, Matrix& t);

// Where past state z_{N−j} (j = 1 … state_points) component i sits in X (layout above); j = 0
// is z_N itself.
inline std::size_t past_state_index(std::size_t n, std::size_t nu, std::size_t points, bool rates,
                                    std::size_t j, std::size_t i) {
  return j == 0 ? i : n + nu * points * (rates ? 2 : 1) + (j - 1) * n + i;
}

}  // namespace macrostep::analysis::detail
