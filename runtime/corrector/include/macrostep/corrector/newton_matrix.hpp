// The factorised interface Jacobian J that the matrix-based strategies (fd, reuse, sap, heun,
// quasi-newton's fd steps) share: the sensitivities ∂y/∂s they fill, J assembled from them at a
// pass's outputs (interface_jacobian.hpp), the Newton step with it, and the κ and H it was made
// for (reuse's staleness rule).
//
// Call order: fill sensitivities() (or set_forward_differences()), assemble(), then any number
// of newton_step() while valid(). Not thread-safe; the system must outlive it.
#pragma once

#include <span>
#include <vector>

#include "macrostep/corrector/interface_jacobian.hpp"
#include "macrostep/corrector/jacobian_strategy.hpp"

namespace macrostep::corrector {

class NewtonMatrix {
 public:
  explicit NewtonMatrix(const system::CoupledSystem& system);

  InputSensitivities& sensitivities() { return dyds_; }
  // ∂y/∂s from the pass's perturbed runs: forward differences (METHODS §4.2). Requires
  // pass.perturbed.
  void set_forward_differences(const PassView& pass);
  // J = I − (∂φ/∂y)(∂y/∂s) at the pass's outputs, factorised, made for the pass's κ and H.
  // False (and not valid()) if J is singular or not finite (D-11).
  bool assemble(const PassView& pass);
  bool valid() const { return valid_; }
  void invalidate() { valid_ = false; }
  double h() const { return h_; }       // of the last assemble() (0 before)
  int kappa() const { return kappa_; }  // of the last assemble() (−1 before)
  // s ← s + J⁻¹ r; `residual` holds r on entry and the step on return. Requires valid().
  void newton_step(std::span<double> residual, std::span<double> s);
  // The finite-difference iterate (fd, reuse): a pass with perturbed runs assembles J from
  // them (`evaluated` is set, whether or not J is usable); a pass without uses the kept J. Then
  // newton_step(). False when there is no usable J (the corrector fails the attempt).
  bool finite_difference_iterate(const PassView& pass, std::span<double> residual,
                                 std::span<double> s, bool& evaluated);

 private:
  const system::CoupledSystem& system_;
  InterfaceJacobian jacobian_;
  InputSensitivities dyds_;
  std::vector<std::vector<double>> perturbed_;
  std::vector<double> channel_delta_;
  bool valid_ = false;
  double h_ = 0.0;
  int kappa_ = -1;
};

}  // namespace macrostep::corrector
