// Builders from the accepted history (METHODS §2.2, §2.3, §3.1, §5.1).
//
// Every builder reads only accepted points (CouplingHistory), takes the planned end time
// T_{N+1} > T_N = history.newest_time(), and throws std::invalid_argument (naming what was
// missing) if the history is too short, κ is out of range or T_{N+1} ≤ T_N. Vector outputs
// have history.channels() entries, indexed by global coupling channel; step polynomials take
// a selection of global channels (a subsystem's inputs, in its input order).
//
// Which builder for which run (METHODS §2.2 table):
//   explicit step        s = lagrange_prediction(κ)           → step_polynomial(κ, s)
//                        or least_squares_prediction(κ, N_sp)
//   exMD comparison      ŝ = lagrange_prediction(κ+1) (Eq. 3.8) → step_polynomial(κ, ŝ)
//   exLE comparison      extrapolation_comparison_polynomial(κ)   (degree κ+1, Eq. 3.2/3.3)
//   implicit iterate j   step_polynomial(κ, u^j); perturbed runs change one end value.
#pragma once

#include <cstddef>
#include <span>

#include "macrostep/polynomials/history.hpp"
#include "macrostep/polynomials/support_points.hpp"

namespace macrostep::polynomials {

// u^pre = P_κ(T_{N+1}; [T_{N−κ}, u_{N−κ}], …, [T_N, u_N])   (Eq. 2.23). Needs κ+1 points.
void lagrange_prediction(const CouplingHistory& history, int kappa, double t_next,
                         std::span<double> u_pre);

// Least-squares predictor (METHODS §2.3, D-5): the unweighted fit of degree κ through the
// n_sp latest points, on times τ = (T − T_N)/H with H = T_{N+1} − T_N, evaluated at τ = 1.
// n_sp ≥ κ+1 (n_sp = κ+1 is the Lagrange predictor); needs n_sp points, n_sp ≤ 32.
void least_squares_prediction(const CouplingHistory& history, int kappa, int n_sp, double t_next,
                              std::span<double> u_pre);

// The weights g_i (i = 0 for u_N, i = 1 for u_{N−1}, …) with u^pre = Σ g_i u_{N−i} of the
// least-squares predictor above; g.size() must be n_sp. Exposed for tests and diagnostics.
void least_squares_weights(const CouplingHistory& history, int kappa, int n_sp, double t_next,
                           std::span<double> g);

// û^pre = P_{κ+1}(T_{N+1}; [T_{N−κ−1}, u_{N−κ−1}], …, [T_N, u_N])   (Eq. 3.8). Needs κ+2
// points. The exMD comparison run uses step_polynomial(κ, û^pre).
void milne_comparison_prediction(const CouplingHistory& history, int kappa, double t_next,
                                 std::span<double> u_hat);

// p_{N+1}(t; s) of degree κ (Eq. 2.24): nodes T_{N−κ+1}..T_N from the history and T_{N+1}
// with end values s[channels[k]] for input k. end_values has history.channels() entries.
// Needs max(κ, 1) points; κ ≤ SupportPoints::kMaxDegree; channels.size() ≤ kMaxChannels and
// each index < history.channels().
SupportPoints step_polynomial(const CouplingHistory& history, int kappa, double t_next,
                              std::span<const double> end_values,
                              std::span<const std::size_t> channels);
// The same over all channels (history.channels() ≤ kMaxChannels).
SupportPoints step_polynomial(const CouplingHistory& history, int kappa, double t_next,
                              std::span<const double> end_values);

// exLE comparison polynomial (Eq. 3.2/3.3): degree κ+1 through T_{N−κ}..T_N and
// [T_{N+1}, û^pre], which is the degree-(κ+1) extrapolation polynomial through
// T_{N−κ−1}..T_N. Needs κ+2 points; κ+1 ≤ kMaxDegree.
SupportPoints extrapolation_comparison_polynomial(const CouplingHistory& history, int kappa,
                                                  double t_next,
                                                  std::span<const std::size_t> channels);

// ℓ_{N+1}(t) of the degree-κ step polynomial (METHODS §2.2), from the history directly.
double end_basis(const CouplingHistory& history, int kappa, double t_next, double t);

// u[T_M, …, T_{M−j}] per channel (divided difference of order j over the j+1 newest points),
// for SDN (METHODS §6.3) and the a-priori estimate (Eq. 3.26). Needs j+1 points.
void newest_divided_difference(const CouplingHistory& history, int order, std::span<double> out);

}  // namespace macrostep::polynomials
