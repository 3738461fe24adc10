// The oscillator chain as a coupled system: the force/force cut chain of METHODS.md §1.3
// (seed 000 Eq. 2.16-2.20), lowered into a SystemDescription. This is the only part of
// runtime/system that knows the chain; everything downstream sees a general description.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep::system {

// The chain cut at `boundaries` (strictly increasing from 0 to chain->size(); from
// library::equal_partition or sized_partition): subsystem L ("segment_<L+1>") holds masses
// [boundaries[L], boundaries[L+1]) as a chain segment (library::ChainSegmentDescription sharing
// `chain`); cut L is the element between masses boundaries[L+1]-1 and boundaries[L+1], a
// spring_damper connection "lambda_<L+1>" with that element's own law reading [x_last, v_last]
// of subsystem L and [x_first, v_first] of subsystem L+1 and feeding the input of both
// segments at the cut. Naming::kGlobal (columns and monitored outputs "x_20", "v_20", "x_21",
// ...: the coupling bodies, left then right of each cut, in cut order), `whole` the uncut chain
// (all masses in one segment), `chain` the origin with `boundaries` (seed 0: the caller's).
// The chain has no feed-through, so the consistent update (Eq. 2.22, D-1) is the explicit
// evaluation u_{N+1} = φ(y_{N+1}) (Eq. 2.25). Throws std::invalid_argument for boundaries that
// are not strictly increasing from 0 to chain->size().
SystemDescription chain_description(std::shared_ptr<const library::ChainParameters> chain,
                                    const std::vector<std::size_t>& boundaries);

// build_system(chain_description(...)) of a copy of `params`.
CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries);

}  // namespace macrostep::system
