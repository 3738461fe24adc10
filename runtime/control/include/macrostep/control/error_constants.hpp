// Error constants of the explicit/implicit co-simulation for variable macro steps
// (METHODS §5.2; seed 000 Eq. 3.11, 3.15, App. A.1).
//
//   C^κ_pos = (1/H²) ∫_{T_N}^{T_{N+1}} ∫_{T_N}^{τ} L^κ(t) dt dτ = ∫_0^1 (1 − s) L^κ ds
//   C^κ_vel = (1/H)  ∫_{T_N}^{T_{N+1}} L^κ(t) dt              = ∫_0^1 L^κ ds
//   L^κ = Π_{j=0}^{κ−1} (s + α_j − 1)/α_j,  α_j = (T_{N+1} − T_{N−j})/H,  s = (t − T_N)/H
//
// Computed exactly by expanding the product into monomial coefficients; cheap enough to be
// recomputed every step, as the spec requires.
#pragma once

#include <span>

#include "macrostep/polynomials/history.hpp"

namespace macrostep::control {

inline constexpr int kMaxErrorConstantDegree = 6;  // κ_max + 1

struct ErrorConstants {
  double pos = 0.0;
  double vel = 0.0;
};

// From the normalised distances α_0..α_{κ−1} (alpha.size() ≥ κ; α_0 = 1 for a real grid).
// Throws std::invalid_argument for κ outside 0..6, too few or non-positive α.
ErrorConstants error_constants(int kappa, std::span<const double> alpha);

// Constant macro steps: α_j = j + 1 (seed 000 Table 3.1 / A.1 values).
ErrorConstants constant_step_error_constants(int kappa);

// From the accepted history (nodes T_N..T_{N−κ+1} = time_back(0..κ−1)) and T_{N+1}.
ErrorConstants error_constants(const polynomials::CouplingHistory& history, int kappa,
                               double t_next);

// The exMD/imMD ratios C^{κ+1}/C^κ (pos and vel) of the current step; C^{κ+1} uses the extra
// node T_{N−κ}, so the history needs κ+1 points. κ ≤ 5.
struct MilneRatios {
  double pos = 0.0;
  double vel = 0.0;
};
MilneRatios milne_ratios(const polynomials::CouplingHistory& history, int kappa, double t_next);
MilneRatios constant_step_milne_ratios(int kappa);

}  // namespace macrostep::control
