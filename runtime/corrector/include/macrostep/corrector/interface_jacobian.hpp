// The interface Jacobian of the Newton corrector (METHODS.md §4.1, D-12; seed 000 Eq. 2.27-2.29):
//
//   g(u) = u − φ(y(u)) = 0,   J = I − (∂φ/∂y)(∂y/∂s),   J (u^{j+1} − u^j) = −g(u^j)
//
// ∂φ/∂y comes from the coupling laws (CouplingLaw::jacobian, analytic); ∂y/∂s is the sensitivity
// of each subsystem's outputs at T_{N+1} to the end support value of each of its inputs
// (InputSensitivities: finite differences of perturbed runs, METHODS §4.2, or the sap
// approximation, §4.5). Feed-through (∂φ/∂u) does not occur: CoupledSystem rejects it.
//
// Structure (D-12): J_ik ≠ 0 iff i = k, or the law that writes u_i reads an output of a
// subsystem that receives u_k. The pattern is computed once from the CoupledSystem, J is held in
// compressed sparse columns and factorised by KLU (the chain gives a tridiagonal J). The
// assembly runs in a fixed order, so J and the Newton step are the same however the subsystems
// ran (contract 1).
//
// Call order: construct once per system; per Newton iteration assemble() then solve() (any
// number of solve() calls for one assembly). Not thread-safe; the system must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "macrostep/system/coupled_system.hpp"

namespace macrostep::corrector {

// ∂y_L/∂s_L of every subsystem L: a dense row-major block of output_size() × input_size()
// (row: output, column: the subsystem's input channel, in its input order).
class InputSensitivities {
 public:
  explicit InputSensitivities(const system::CoupledSystem& system);
  std::span<double> block(std::size_t subsystem) {
    return std::span<double>(values_).subspan(offsets_[subsystem], sizes_[subsystem]);
  }
  std::span<const double> block(std::size_t subsystem) const {
    return std::span<const double>(values_).subspan(offsets_[subsystem], sizes_[subsystem]);
  }
  // Every block, subsystem after subsystem.
  std::span<double> all() { return values_; }
  std::span<const double> all() const { return values_; }
  // Entry (output, channel) of subsystem L's block.
  double& at(std::size_t subsystem, std::size_t output, std::size_t channel) {
    return values_[offsets_[subsystem] + output * inputs_[subsystem] + channel];
  }
  double at(std::size_t subsystem, std::size_t output, std::size_t channel) const {
    return values_[offsets_[subsystem] + output * inputs_[subsystem] + channel];
  }
  std::size_t inputs(std::size_t subsystem) const { return inputs_[subsystem]; }
  // Forward differences (METHODS §4.2): column c of subsystem L is
  // (perturbed[c] − nominal)/delta[c] over every output.
  void set_forward_difference(std::size_t subsystem, std::span<const double> nominal,
                              std::span<const std::vector<double>> perturbed,
                              std::span<const double> delta);

 private:
  std::vector<double> values_;
  std::vector<std::size_t> offsets_, sizes_, inputs_;
};

// The sparse interface Jacobian and its KLU factorisation.
class InterfaceJacobian {
 public:
  explicit InterfaceJacobian(const system::CoupledSystem& system);
  ~InterfaceJacobian();
  InterfaceJacobian(const InterfaceJacobian&) = delete;
  InterfaceJacobian& operator=(const InterfaceJacobian&) = delete;

  std::size_t size() const { return n_; }
  std::size_t nonzeros() const { return row_index_.size(); }
  // The values of an earlier assemble() (values(), nonzeros() of them), factorised as assemble()
  // does: false (and solve() not allowed) where they are singular or not finite.
  bool factorize(std::span<const double> values);

  // J = I − (∂φ/∂y)(∂y/∂s) with the laws' ∂φ/∂y at `outputs` (outputs[i]: subsystem i's
  // outputs at T_{N+1}) and the sensitivities `dyds`; the row of a constraint variable
  // (CoupledSystem::is_constraint) has no identity. Factorises J; returns false if KLU finds
  // it singular or a value is not finite (then solve() must not be called).
  bool assemble(std::span<const std::vector<double>> outputs, const InputSensitivities& dyds);

  // rhs ← J⁻¹ rhs (size size()). Requires a successful assemble().
  void solve(std::span<double> rhs);

  // J as a dense row-major matrix (tests and diagnostics).
  std::vector<double> dense() const;
  // The CSC pattern (column_start size n+1, row_index) and the values of the last assemble().
  std::span<const std::int64_t> column_start() const { return column_start_; }
  std::span<const std::int64_t> row_index() const { return row_index_; }
  std::span<const double> values() const { return values_; }

 private:
  // One product term of an entry: values[entry] −= dphi[dphi_index] · S_L(output, channel).
  struct Term {
    std::size_t entry;
    std::size_t dphi_index;
    std::size_t subsystem;
    std::size_t output;
    std::size_t channel;
  };
  void build_pattern(const system::CoupledSystem& system);
  void free_numeric();
  bool factorize_values();  // KLU of values_ (D-11's checks)

  const system::CoupledSystem& system_;
  std::size_t n_ = 0;
  std::vector<std::int64_t> column_start_, row_index_;
  std::vector<double> values_;
  std::vector<std::size_t> diagonal_;     // entry index of J_ii
  std::vector<Term> terms_;               // in a fixed order
  std::vector<std::size_t> dphi_offset_;  // law k's block in dphi_
  std::vector<double> dphi_;
  struct Klu;  // KLU's symbolic and numeric objects (klu_l_*)
  std::unique_ptr<Klu> klu_;
};

}  // namespace macrostep::corrector
