// The coupled system of a co-simulation (METHODS.md §1.1, §1.3; seed 000 §2.3-2.4): the
// subsystems, which coupling variable feeds which subsystem input, and the coupling laws
// u = phi(y). The laws live here, in the master; subsystems only see inputs and report outputs.
//
// For now the only decomposition is the force/force cut chain (seed 000 Eq. 2.16-2.20):
// n_c = n_s - 1 cut elements; lambda_L = F_SD,c(x_first(L+1) - x_last(L), v_first(L+1) -
// v_last(L)) with the cut element's own law; subsystem L receives [lambda_{L-1}, lambda_L].
// The chain has no feed-through, so the consistent update (Eq. 2.22, D-1) is the explicit
// evaluation u_{N+1} = phi(y_{N+1}) (Eq. 2.25).
//
// Ownership: a CoupledSystem owns its subsystems; it is immutable after construction and may
// be shared (const) by every executor thread.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::system {

// One output of one subsystem.
struct OutputRef {
  std::size_t subsystem = 0;
  std::size_t output = 0;
};

// A coupling body whose position and velocity the concept-1 estimators monitor (METHODS §5).
// Names are the physical quantities ("x_17", "v_17"), as in a monolithic run.
struct CouplingBody {
  std::string x_name, v_name;
  OutputRef x, v;
};

// lambda = law.force(x_right - x_left, v_right - v_left): a cut spring/damper element.
struct ForceCoupling {
  std::string name;  // "lambda_L", 1-based L
  library::ElementLaw law;
  OutputRef x_left, v_left, x_right, v_right;
};

class CoupledSystem {
 public:
  CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                std::vector<ForceCoupling> couplings,
                std::vector<std::vector<std::size_t>> input_couplings,
                std::vector<CouplingBody> coupling_bodies);

  std::size_t subsystem_count() const { return subsystems_.size(); }
  const model::Subsystem& subsystem(std::size_t i) const { return *subsystems_.at(i); }

  std::size_t coupling_count() const { return couplings_.size(); }
  const ForceCoupling& coupling(std::size_t c) const { return couplings_.at(c); }

  // Coupling-variable indices feeding subsystem i's inputs, in the subsystem's input order.
  std::span<const std::size_t> input_couplings(std::size_t i) const {
    return input_couplings_.at(i);
  }

  // u = phi(y): outputs[i] holds the outputs of subsystem i (size output_size()). The
  // evaluation order is fixed (contract 1: one result however the subsystems ran).
  void evaluate_couplings(std::span<const std::vector<double>> outputs, std::span<double> u) const;

  std::span<const CouplingBody> coupling_bodies() const { return bodies_; }

  // The consistent coupling variables at t0 from every subsystem's initial state.
  std::vector<double> initial_couplings() const;

  // Gathers u's entries that feed subsystem i (size subsystem(i).input_size()).
  void gather_inputs(std::size_t i, std::span<const double> u, std::span<double> inputs) const;

 private:
  std::vector<std::unique_ptr<model::Subsystem>> subsystems_;
  std::vector<ForceCoupling> couplings_;
  std::vector<std::vector<std::size_t>> input_couplings_;
  std::vector<CouplingBody> bodies_;
};

// The force/force cut chain: subsystem L holds masses [boundaries[L], boundaries[L+1]) (0-based;
// boundaries from library::equal_partition or sized_partition); cut L is the element between
// masses boundaries[L+1]-1 and boundaries[L+1]. Throws std::invalid_argument for boundaries
// that are not strictly increasing from 0 to params.size().
CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries);

}  // namespace macrostep::system
