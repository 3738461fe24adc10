// An independent implementation of explicit Jacobi co-simulation of a *linear* oscillator chain
// whose subsystems are integrated exactly (seed 000 App. C / METHODS §7.1, D-37): every macro
// step is one matrix exponential of an augmented system that holds the chain's states, a
// generator of the harmonic forces (s' = ωc, c' = −ωs) and, per coupling variable, the Jordan
// chain q_0' = q_1, ..., q_κ' = 0 that generates the extrapolation polynomial itself. So the
// input polynomial is integrated exactly, not sampled: what remains is the error of the coupling
// scheme alone, the yardstick for macrostep's co-simulation error ("jumps at macro
// points").
//
// Scope: chains whose elements are linear (C = D = 0) and whose forces are harmonic; cut into
// consecutive mass ranges; force/force coupling λ_j = c Δx + d Δv of the cut element (the last
// body of a part receives +λ, the first body of the next −λ, seed 000 Eq. 2.16); either fixed H
// from T = 0 with κ_N = min(κ, N), or any grid of macro points with the degree of each step
// (a run's own, e.g. with the Listing 5.1 start-up ramp): the extrapolation is the Lagrange
// polynomial through T_N, …, T_{N−κ_N} wherever they lie; consistent update u_{N+1} = φ(z_{N+1}).
//
// Nothing here uses macrostep's integrator or coupling code; it shares only ChainParameters.
#pragma once

#include <cstddef>
#include <vector>

#include "macrostep/analysis/dense.hpp"
#include "macrostep/library/chain_parameters.hpp"

namespace macrostep::exact {

// Dense matrices and e^M (scaling and squaring, degree-13 Padé) of the stability analysis: the
// check integrates exactly what IDA and the scheme approximate, so it shares no code with them.
using analysis::expm;
using analysis::Matrix;

// The states of the whole chain, [x_0, v_0, x_1, v_1, ...] (ChainSegment's layout), at the macro
// points T_N = N·H, N = 0..steps.
using Trajectory = std::vector<std::vector<double>>;

// The monolithic chain, exactly (one exponential of the chain plus force generator per step).
Trajectory exact_monolithic(const library::ChainParameters& chain, double h, std::size_t steps);
// The same at the macro points `times` (T_0 = times[0]).
Trajectory exact_monolithic(const library::ChainParameters& chain,
                            const std::vector<double>& times);

// Macro points T_0..T_M and the extrapolation degree of each step T_N → T_{N+1} (size M).
struct Grid {
  std::vector<double> times;
  std::vector<int> kappa;
};

// Explicit Jacobi with exact subsystem integration: subsystems between the mass boundaries
// [0, b_1, ..., n] (as library::equal_partition gives them), fixed H, extrapolation degree κ
// (0..5) of the coupling variables.
Trajectory exact_jacobi(const library::ChainParameters& chain,
                        const std::vector<std::size_t>& boundaries, double h, int kappa,
                        std::size_t steps);
// The same on `grid` (degrees 0..5; a step of degree κ_N uses min(κ_N, N) + 1 points).
Trajectory exact_jacobi(const library::ChainParameters& chain,
                        const std::vector<std::size_t>& boundaries, const Grid& grid);

}  // namespace macrostep::exact
