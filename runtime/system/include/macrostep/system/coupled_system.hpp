// The coupled system of a co-simulation (METHODS.md §1.1, §1.4; seed 000 §2.3-2.4): the
// subsystems, the coupling laws u = φ(y), which coupling variable feeds which subsystem input,
// and the outputs the concept-1 estimators monitor. The laws live here, in the master;
// subsystems only see inputs and report outputs. The system knows no particular model: builders
// such as make_chain_system (chain_system.hpp) assemble it.
//
// Coupling variables: law k writes law(k).write_count() variables with the consecutive global
// indices law_offset(k) .. law_offset(k) + write_count() − 1, in law order.
//
// Ownership: a CoupledSystem owns its subsystems and laws; it is immutable after construction
// and may be shared (const) by every executor thread.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

// An output whose error the concept-1 estimators (exLE, exMD, imMD; METHODS §5) watch. The
// group says which WRMS norm and which atol it belongs to (§6.1).
struct MonitoredOutput {
  std::string name;  // the physical quantity ("x_17"), as in a monolithic run: a result column
  OutputRef output;
  control::WeightGroup group = control::WeightGroup::kPosition;  // kPosition or kVelocity
};

class CoupledSystem {
 public:
  // input_couplings[i]: the global coupling-variable index of each input of subsystem i, in
  // the subsystem's input order. Throws std::invalid_argument for references to missing
  // subsystems, outputs or coupling variables, a monitored output in a group other than
  // kPosition/kVelocity, and for feed-through (subsystems or laws) until the Newton update of
  // D-1 exists.
  CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                std::vector<std::unique_ptr<CouplingLaw>> laws,
                std::vector<std::vector<std::size_t>> input_couplings,
                std::vector<MonitoredOutput> monitored);

  std::size_t subsystem_count() const { return subsystems_.size(); }
  const model::Subsystem& subsystem(std::size_t i) const { return *subsystems_.at(i); }

  // n_c, the number of coupling variables of all laws.
  std::size_t coupling_count() const { return coupling_names_.size(); }
  // Name of coupling variable c ("lambda_3").
  const std::string& coupling_name(std::size_t c) const { return coupling_names_.at(c); }

  std::size_t law_count() const { return laws_.size(); }
  const CouplingLaw& law(std::size_t k) const { return *laws_.at(k); }
  // Global index of law k's first coupling variable.
  std::size_t law_offset(std::size_t k) const { return law_offsets_.at(k); }

  // Coupling-variable indices feeding subsystem i's inputs, in the subsystem's input order.
  std::span<const std::size_t> input_couplings(std::size_t i) const {
    return input_couplings_.at(i);
  }

  // u = φ(y): outputs[i] holds the outputs of subsystem i (size output_size()), u has
  // coupling_count() entries. Laws are evaluated in law order (contract 1: one result however
  // the subsystems ran).
  void evaluate_couplings(std::span<const std::vector<double>> outputs, std::span<double> u) const;

  // u̇ = dφ/dt for the variables of laws with CouplingLaw::has_rate(); the others' entries are
  // set to 0 (callers use rates only of variables whose law has them: has_rate(c)).
  void evaluate_rates(std::span<const std::vector<double>> outputs, std::span<double> u_dot) const;
  // Whether coupling variable c's law has a rate.
  bool has_rate(std::size_t c) const;

  // ∂φ/∂y of law k at `outputs`: dense row-major law(k).write_count() × law(k).reads().size(),
  // columns in the order of law(k).reads() (CouplingLaw::jacobian). The implicit scheme
  // assembles the sparse interface Jacobian from these blocks.
  void coupling_jacobian(std::size_t k, std::span<const std::vector<double>> outputs,
                         std::span<double> dphi_dy) const;

  // The monitored outputs in a fixed order, and the weight group of each (same order).
  std::span<const MonitoredOutput> monitored_outputs() const { return monitored_; }
  std::span<const control::WeightGroup> monitored_groups() const { return monitored_groups_; }
  // values[j] = the value of monitored output j in `outputs` (size monitored_outputs().size()).
  void gather_monitored(std::span<const std::vector<double>> outputs,
                        std::span<double> values) const;

  // The consistent coupling variables at t0 from every subsystem's initial state.
  std::vector<double> initial_couplings() const;

  // Gathers u's entries that feed subsystem i (size subsystem(i).input_size()).
  void gather_inputs(std::size_t i, std::span<const double> u, std::span<double> inputs) const;

 private:
  void check_output(const OutputRef& r, const std::string& what) const;
  void check_subsystems() const;
  void index_laws();
  void index_monitored();
  // y_read of `law` from `outputs` into the front of `buffer`.
  static std::span<const double> gather_reads(const CouplingLaw& law,
                                              std::span<const std::vector<double>> outputs,
                                              std::span<double> buffer);

  std::vector<std::unique_ptr<model::Subsystem>> subsystems_;
  std::vector<std::unique_ptr<CouplingLaw>> laws_;
  std::vector<std::size_t> law_offsets_;
  std::vector<std::string> coupling_names_;
  std::size_t max_reads_ = 0;  // largest reads() of any law: the gather buffer's size
  std::vector<std::vector<std::size_t>> input_couplings_;
  std::vector<MonitoredOutput> monitored_;
  std::vector<control::WeightGroup> monitored_groups_;
};

}  // namespace macrostep::system
