// The oscillator chain as a coupled system: the force/force cut chain of METHODS.md §1.3
// (seed 000 Eq. 2.16-2.20). This builder is the only part of runtime/system that knows the
// chain; everything downstream sees a general CoupledSystem.
#pragma once

#include <cstddef>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::system {

// Subsystem L holds masses [boundaries[L], boundaries[L+1]) (0-based; boundaries from
// library::equal_partition or sized_partition); cut L is the element between masses
// boundaries[L+1]-1 and boundaries[L+1]. The system has
//  - laws: one SpringDamperLaw per cut, λ_L = F_SD,c(x_first(L+1) − x_last(L),
//    v_first(L+1) − v_last(L)) with the cut element's own law, named "lambda_L" (1-based);
//  - inputs: subsystem L receives [λ_{L−1}, λ_L] (only one of them at a chain end);
//  - monitored outputs: the 2n_c coupling bodies, the left and then the right body of each cut
//    in cut order, each as its position and then its velocity ("x_20", "v_20", "x_21", ...).
// The chain has no feed-through, so the consistent update (Eq. 2.22, D-1) is the explicit
// evaluation u_{N+1} = φ(y_{N+1}) (Eq. 2.25). Throws std::invalid_argument for boundaries
// that are not strictly increasing from 0 to params.size().
CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries);

}  // namespace macrostep::system
