// Coupling-variable approximations on one macro step beside Lagrange extrapolation
// (METHODS.md §2.4, §2.5; seed 001 §2, Eq. 9–14; seed 003 §2.2):
//
//   lagrange   p_{N+1}(t; u_pre) of degree κ (§2.2): the runtime's default, built by builders.hpp
//   c0, c1     extrapolated interpolation of degree k (seed 001 Eq. 12a/12b): continuous (C1 also
//              slope-continuous) at T_N, ũ(T_{N+1}) = the Lagrange extrapolated value
//   const-K-R, lin-K-R   the seed-003 linear combinations e_0 = Σ_k (a_k u^{l−k} + b_k u̇^{l−k} H)
//              held constant (Const) or as u^l + e_1 (t − t_l) with the same step integral (Lin)
//
// Every approximation is a polynomial on [T_N, T_{N+1}] that is linear in the history values
// u_{N−j} (and, for seed-003 sets with b ≠ 0, in the rates u̇_{N−j}). A Stencil states that
// polynomial by its values at degree+1 nodes, θ = (t − T_N)/H: the same form the worker evaluates
// (model::SupportPoints), so a new approximation needs no protocol change. The runtime applies a
// stencil to its history (apply_stencil); the stability analysis (runtime/analysis) builds its
// recurrence matrix from the same stencil on a uniform grid — one source for the weights.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "macrostep/polynomials/history.hpp"
#include "macrostep/polynomials/support_points.hpp"

namespace macrostep::polynomials {

enum class ApproximationKind { kLagrange, kC0, kC1, kConst, kLin };

// The (a_k, b_k) of a seed-003 set, k = 0 for u^l (METHODS §2.5); k < K ≤ kMaxK.
struct LinearCombination {
  static constexpr std::size_t kMaxK = 3;
  int points = 1;  // K
  std::array<double, kMaxK> a{};
  std::array<double, kMaxK> b{};
  bool uses_rates() const;  // some b_k ≠ 0: needs u̇ at the macro points
};

// Seed 003 Eq. 2.62: the K = 2, R = 3 family with parameter p (Const 2,4 is p = 7/12).
LinearCombination family_r3(double p);
// Seed 003 Eq. 2.66: the K = 2, R = 2 family with parameters p_1 (= b_1) and p_2 (= b_0).
LinearCombination family_r2(double p1, double p2);

// One approximation as selected in a configuration. name is the canonical spelling.
struct Approximation {
  ApproximationKind kind = ApproximationKind::kLagrange;
  LinearCombination weights;  // kConst, kLin only
  std::string name = "lagrange";

  bool is_lagrange() const { return kind == ApproximationKind::kLagrange; }
  bool uses_rates() const;  // a seed-003 set with b ≠ 0
};

// Parses a name (case-sensitive):
//   lagrange | c0 | c1
//   const-1-1 | const-1-2 | const-2-2-b0 | const-3-3-b0 | const-2-4 | const-3-6 |
//   const-2-3-opt | const-2-2-opt, and the same with lin- (Lin uses Const's (a, b), §2.5)
//   const-2-3:p=P, lin-2-3:p=P (Eq. 2.62), const-2-2:p1=P1,p2=P2, lin-2-2:p1=P1,p2=P2 (Eq. 2.66)
// Throws std::invalid_argument naming the allowed values.
Approximation parse_approximation(std::string_view name);
// The allowed spellings, for messages and --help.
std::string_view approximation_names();

// The step approximation as node values linear in the history (see the file comment):
//   value at node m = Σ_j w[m][j]·u_{N−j} + Σ_j v[m][j]·H·u̇_{N−j},   j < points.
// Nodes: θ_degree = 1 (T_{N+1}); for degree ≥ 1, θ_{degree−1} = 0 (T_N); older nodes lie before
// T_N (Lagrange: the history's own times; the others: θ = −1, −2, … on the current H).
struct Stencil {
  static constexpr std::size_t kMaxNodes = SupportPoints::kMaxNodes;
  static constexpr std::size_t kMaxPoints = 8;
  int degree = 0;
  int points = 1;  // history values used
  bool uses_rates = false;
  std::array<double, kMaxNodes> theta{};
  std::array<double, kMaxNodes> time{};  // the node times themselves (time[degree] = t_next)
  std::array<std::array<double, kMaxPoints>, kMaxNodes> w{};
  std::array<std::array<double, kMaxPoints>, kMaxNodes> v{};
};

// The stencil of `approximation` for the step T_N → t_next, with times_back[j] = T_{N−j} (as many
// as the history holds). `order` is κ for Lagrange and k (0..3) for C0/C1; unused by the seed-003
// sets. Short histories fall back as the start-up needs: Lagrange and C0/C1 lower their degree to
// what the history allows (C0/C1 need k+2 points; with one point ũ ≡ u_N), a seed-003 set with
// fewer than K points is Const 1,1,b=0 (or Lin 1,2 for a Lin set with rates; D-9).
// Throws std::invalid_argument for an order out of range or t_next ≤ T_N.
Stencil make_stencil(const Approximation& approximation, int order,
                     std::span<const double> times_back, double t_next);

// The channels' step polynomial from the stencil: node values from the history (and rates, one
// row per history point like the history, or empty when the stencil uses none), in the
// SupportPoints form the worker evaluates. channels selects global coupling channels (a
// subsystem's inputs, in input order); approximations[c] and order give each channel's stencil.
// Channels of different degree share the largest degree's nodes (a lower-degree polynomial is
// stated exactly by its values there). Throws std::invalid_argument like the builders.
SupportPoints approximation_polynomial(const CouplingHistory& history, const CouplingHistory* rates,
                                       std::span<const Approximation* const> approximations,
                                       int order, double t_next,
                                       std::span<const std::size_t> channels);

}  // namespace macrostep::polynomials
