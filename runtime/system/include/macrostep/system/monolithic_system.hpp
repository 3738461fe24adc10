// A coupled system assembled into one residual system, the monolithic baseline of any
// description (METHODS.md §1.1, seed 000 Eq. 2.4): the semi-explicit index-1 DAE in (z, u)
//   B ż = f^co(t, z, u),   g(t, z, u) = u − φ(y(z)) = 0,
// with all subsystems' states and the coupling variables as algebraic unknowns:
//   z_mono = [z_1; z_2; ...; z_ns; u_1 .. u_nc]      (subsystem blocks in order, then couplings)
//   F_mono = [F_1(t, z_1, z_1', u|_1); ...; F_ns(...); u − φ(y_1(z_1), ..., y_ns(z_ns))].
// The Jacobian is block sparse: each subsystem's own block, its ∂F_L/∂u columns
// (Subsystem::input_jacobian), the coupling rows' −∂φ/∂y·∂y/∂z (CouplingLaw::jacobian times
// Subsystem::output_jacobian) and the identity for ∂g/∂u. Integrated by one IDA+KLU, this is the
// reference a co-simulation of the same CoupledSystem is compared with.
//
// It is a model::Subsystem without inputs: names are the subsystems' own state and output names
// (for the chain "x_17", "v_17", as a whole-chain run) and the coupling variables' names for the
// algebraic unknowns (role kOther); outputs are all subsystems' outputs concatenated in order.
// Names repeat when two subsystems use the same local names (two drive-train segments both have
// "phi_1"): the system has no subsystem names, so a caller that has them (the monolithic run of a
// system description, run/monolithic.cpp) prefixes "<subsystem>." by state_offset() and
// output_offset().
// With feed-through subsystems y = y(z, u), so g = u − φ(y(z, u)) and the coupling rows also get
// −∂φ/∂y·∂y/∂u in the coupling columns (Subsystem::feedthrough_jacobian); the DAE keeps index 1
// as long as ∂g/∂u = I − ∂φ/∂y·D is regular (the configuration refuses loops closed by
// feed-through alone). initial_state() takes the CoupledSystem's (consistent) initial couplings,
// every subsystem's consistent initial state with them, and u̇0 from the derivative of g = 0,
// u̇0 = ∂φ/∂y·(∂y/∂z·ż0 + D·u̇0), solved by substitution (D·u̇ reaches only couplings downstream
// of a feed-through subsystem; n_c sweeps are exact without a feed-through loop).
//
// Ownership: references the CoupledSystem, which must outlive it. Immutable after construction;
// residual() and jacobian() keep per-thread scratch, so one MonolithicSystem may serve several
// integrators concurrently (model::Subsystem contract). output_jacobian/input_jacobian keep the
// base class's finite-difference defaults (a monolithic system is not coupled further).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "macrostep/model/subsystem.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::system {

class MonolithicSystem final : public model::Subsystem {
 public:
  // Throws std::invalid_argument if the subsystems start at different initial times.
  explicit MonolithicSystem(const CoupledSystem& system);

  // Where subsystem L's states and the coupling variables sit in z.
  std::size_t state_offset(std::size_t subsystem) const { return state_offsets_.at(subsystem); }
  std::size_t coupling_offset() const { return coupling_offset_; }
  // Where subsystem L's outputs sit in outputs().
  std::size_t output_offset(std::size_t subsystem) const { return output_offsets_.at(subsystem); }

  std::size_t state_size() const override { return roles_.size(); }
  std::size_t input_size() const override { return 0; }
  std::size_t output_size() const override { return output_offsets_.back(); }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  // The subsystems' nominals (1 for the states of those without, and for the coupling rows);
  // empty where no subsystem has any.
  std::span<const double> state_nominals() const override { return nominals_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  double initial_time() const override { return initial_time_; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> /*u*/, std::span<double> r) const override {
    residual_in(parts_, t, z, zp, r);
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> /*u*/, double cj, std::span<double> values) const override {
    jacobian_in(parts_, t, z, zp, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> /*u*/,
               std::span<double> y) const override {
    outputs_in(parts_, t, z, y);
  }

  // The events of its subsystems (model/events.hpp), or null if none has any
  // (monolithic_events.cpp). A mode holds every such subsystem's mode; its indicators are theirs
  // in subsystem order; its next time event the earliest of theirs. At an event every subsystem
  // with events handles it (an FMU without an event of its own iterates its discrete states
  // without change, as FMI allows), then the coupling variables are made consistent with the new
  // outputs, g(t, z, u) = 0.
  const model::Events* events() const override;
  ~MonolithicSystem() override;

  // Each subsystem's equations (its own, or those of its current mode).
  using Parts = std::vector<const model::Subsystem*>;
  void residual_in(const Parts& parts, double t, std::span<const double> z,
                   std::span<const double> zp, std::span<double> r) const;
  void jacobian_in(const Parts& parts, double t, std::span<const double> z,
                   std::span<const double> zp, double cj, std::span<double> values) const;
  void outputs_in(const Parts& parts, double t, std::span<const double> z,
                  std::span<double> y) const;
  // u|_L (subsystem L's inputs) from the coupling part of z.
  void gather_inputs(std::size_t subsystem, std::span<const double> z,
                     std::span<double> inputs) const;
  // The coupling variables in z from the subsystems' outputs at z: u = φ(y(z, u)) (a sweep per
  // coupling variable with feed-through), constraints' multipliers kept. Returns whether any
  // changed.
  bool settle_couplings(const Parts& parts, double t, std::span<double> z) const;

 private:
  // One term −∂φ_w/∂y_r·∂y_r/∂z_j of a coupling row: value index `destination` gets
  // −dphi[law][dphi_entry]·(output Jacobian of `subsystem`)[output_entry].
  struct CouplingTerm {
    std::size_t destination, law, dphi_entry, subsystem, output_entry;
  };
  // One term −∂φ_w/∂y_r·D_{r,j} of a coupling row in the column of coupling variable
  // `coupling` (input j of a feed-through subsystem): d_entry indexes its dense ∂y/∂u.
  struct FeedthroughTerm {
    std::size_t destination, law, dphi_entry, subsystem, d_entry, row, coupling;
  };
  struct Entry {
    std::size_t column, row;
    bool operator<(const Entry& o) const {
      return column != o.column ? column < o.column : row < o.row;
    }
    bool operator==(const Entry& o) const { return column == o.column && row == o.row; }
  };
  // The per-thread scratch of residual()/jacobian().
  struct Scratch;
  Scratch& scratch() const;

  void collect_entries(std::vector<Entry>& entries) const;
  void build_pattern(std::vector<Entry> entries);
  std::size_t value_index(std::size_t row, std::size_t column) const;
  void index_values();
  // All subsystems' outputs at z into scratch.outputs.
  void evaluate_outputs(const Parts& parts, double t, std::span<const double> z, Scratch& s) const;
  // ∂φ/∂y of every law and ∂y/∂z of every subsystem at z into the scratch.
  void evaluate_coupling_derivatives(const Parts& parts, double t, std::span<const double> z,
                                     Scratch& s) const;
  void set_up_events();

  const CoupledSystem& system_;
  double initial_time_ = 0.0;
  std::vector<std::size_t> state_offsets_, output_offsets_;
  std::size_t coupling_offset_ = 0;
  std::vector<model::StateRole> roles_;
  std::vector<double> nominals_;
  std::vector<model::EntryPattern> output_patterns_, input_patterns_;
  model::SparsityPattern pattern_;
  // Value indices: subsystem L's Jacobian entry k → block_index_[L][k]; its ∂F/∂u entries →
  // input_index_[L], entry by entry, one index per coupling variable feeding the entry's input
  // (a summed input's column is every feed's); ∂g_c/∂u_c → identity_index_[c].
  std::vector<std::vector<std::size_t>> block_index_, input_index_;
  std::vector<std::size_t> identity_index_;
  std::vector<CouplingTerm> coupling_terms_;
  std::vector<FeedthroughTerm> feedthrough_terms_;
  Parts parts_;  // the subsystems themselves
  class PartEvents;
  std::unique_ptr<PartEvents> events_;  // null: no subsystem has events
};

}  // namespace macrostep::system
