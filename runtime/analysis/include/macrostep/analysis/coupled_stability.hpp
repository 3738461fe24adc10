// Linear stability of a co-simulation of any described system (METHODS.md §7.1 generalised
// from the two-mass model): the coupled system linearised at its initial point, the one-step
// recurrence X_{N+1} = M·X_N of the macro steps with exactly integrated subsystems, and ρ(M)
// over the macro-step size.
//
// Linearisation at t0 (every subsystem at its initial state, u0 = initial_couplings()): each
// subsystem's residual F(t, z, ż, u) = 0 gives ż = A_i z + B_i u_i with A_i = −F_ż⁻¹F_z and
// B_i = −F_ż⁻¹F_u (F_ż must be invertible: ODE-form subsystems), its outputs y = C_i z + D_i u_i;
// the laws give u = L y (∂φ/∂y at the initial outputs). With W the wiring of coupling variables
// to inputs, the consistent update (D-1) is u = G z, G = (I − L D W)⁻¹ L C, and
// ż = A z + B W u for the whole stack. The constant parts (t-dependence, offsets) do not enter
// the recurrence.
//
// Recurrence: X = [z; u_N, u_{N−1}, …] (as many past values as the approximation reads; past
// states z_{N−1} … z_{N−κ} after them for the sequential Gauss–Seidel end value).
//  - explicit Jacobi: every subsystem integrates [T_N, T_{N+1}] exactly with the approximation's
//    polynomial (polynomials::make_stencil, the runtime's own weights) of the past values;
//  - implicit (a corrector iterated to convergence): the polynomial is the Lagrange polynomial of
//    degree κ through u_{N−κ+1} … u_N and the new value u_{N+1} = G z_{N+1}, solved for.
//  - Gauss–Seidel (schemes/gauss_seidel.hpp): the subsystems in the configured sequence; a
//    subsystem interpolates (Lagrange of degree κ through the past values and u_{N+1} = G z_{N+1})
//    each input whose law reads only subsystems that ran before it or itself, and extrapolates
//    the others as the explicit scheme does. The end value of a law that reads the subsystem
//    itself (CoupledMethod::end_value): converged, the scheme's repetitions' fixed point, solved
//    for here; sequential, the subsystem's own states extrapolated (Lagrange, degree κ) from
//    z at T_{N−κ} … T_N, which X then holds (Recurrence::state_points). The first subsystem of
//    the sequence extrapolates every input.
// Then u_{N+1} = G z_{N+1} and the history shifts. All three are one linear solve
// (I − K_new G) z_{N+1} = T X with K_new nonzero where a subsystem takes a new value: nowhere
// (explicit), everywhere (implicit), block-triangular in the sequence (Gauss–Seidel).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "macrostep/analysis/dense.hpp"
#include "macrostep/analysis/stability.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::analysis {

// ż = A z + B u, u = G z: the coupled system linearised, states of all subsystems stacked in
// subsystem order.
struct LinearCoupledSystem {
  Matrix a;  // n × n, block diagonal by subsystem
  Matrix b;  // n × n_u: how each coupling variable enters ż (over every input it feeds)
  Matrix g;  // n_u × n: the consistent coupling variables of a state
  std::vector<std::size_t> state_offset;        // subsystem i's states start here (size K + 1)
  std::vector<std::vector<std::size_t>> reads;  // per coupling variable: the subsystems its law
                                                // reads (sorted, unique)
  bool feedthrough = false;                     // some output depends directly on an input

  std::size_t states() const { return a.rows(); }
  std::size_t couplings() const { return g.rows(); }
  // A + B G: the monolithic system's linearisation (the cut closed).
  Matrix monolithic() const;
};

// The most states linearise() accepts: the recurrence's dense matrices are (n + n_u·points)²
// and every scan point takes an exponential of the augmented matrix.
inline constexpr std::size_t kMaxLinearisedStates = 600;

// The linearisation of `system` at its initial point; names[i] names subsystem i in messages
// (empty: numbered). Throws std::invalid_argument naming the subsystem or law it cannot
// linearise: more than kMaxLinearisedStates states, a subsystem whose F_ż is singular (algebraic
// states), a constraint law, an algebraic loop without a unique solution.
LinearCoupledSystem linearise(const system::CoupledSystem& system,
                              std::span<const std::string> names = {});

enum class CoupledScheme { kExplicit, kImplicit, kGaussSeidel };

struct CoupledMethod {
  CoupledScheme scheme = CoupledScheme::kExplicit;
  polynomials::Approximation approximation;  // explicit: Lagrange by default; implicit: Lagrange
  int order = 2;                             // κ (Lagrange), k (C0/C1)
  // Gauss–Seidel: the order in which subsystems run (0-based); empty: index order.
  std::vector<std::size_t> sequence;
  // Gauss–Seidel: the end value of a law that reads the subsystem taking it (stability.hpp).
  GaussSeidelEndValue end_value = GaussSeidelEndValue::kConverged;
};

// The recurrence of one macro step of size h (Recurrence::g and ::a are the system's G and A).
// Throws std::invalid_argument for h ≤ 0, an approximation that needs rates, an implicit scheme
// with another approximation than Lagrange, and for Gauss–Seidel a sequence that is not a
// permutation of the subsystems or a system with direct feed-through (its interpolated values
// would depend on the inputs the earlier subsystems ended with: not analysed).
Recurrence coupled_recurrence(const LinearCoupledSystem& s, const CoupledMethod& method, double h);

// How one macro step of size h grows the state: rho = ρ(M) of coupled_recurrence, and own =
// ρ(e^{hA}) of the monolithic linearisation A, the system's own growth over h. A system that grows
// by itself (an unstable plant, a controller that drives it away) grows in every correct run: only
// growth beyond its own is the coupling's. relative() = rho / max(1, own) is what the scans and the
// fixed-step warning count against 1 (ρ itself for a system that does not grow).
struct MacroStepGrowth {
  double rho = 0.0;
  double own = 0.0;
  double relative() const { return rho / (own > 1.0 ? own : 1.0); }
};
MacroStepGrowth macro_step_growth(const LinearCoupledSystem& s, const CoupledMethod& method,
                                  double h);

// MacroStepGrowth::relative() at `count` log-spaced step sizes from h_min to h_max;
// omega_hat = h·omega_ref.
std::vector<ScanPoint> coupled_scan(const LinearCoupledSystem& s, const CoupledMethod& method,
                                    double h_min, double h_max, std::size_t count,
                                    double omega_ref);

// The band of stable H from the scan's smallest H (StableBand, stability.hpp), refined by
// bisection on this system (MacroStepGrowth::relative()).
StableBand coupled_stable_band(const LinearCoupledSystem& s, const CoupledMethod& method,
                               const std::vector<ScanPoint>& points);

// The largest |λ| of the monolithic linearisation: the fastest time scale of the coupled
// system, 1/s (the reference frequency of ω̂ for a described system). 0 for a system at rest
// with no dynamics.
double fastest_frequency(const LinearCoupledSystem& s);

}  // namespace macrostep::analysis
