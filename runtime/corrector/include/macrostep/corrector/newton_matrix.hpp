// The factorised interface Jacobian J that the matrix-based strategies (fd, reuse, sap, heun,
// quasi-newton's fd steps) share: the sensitivities ∂y/∂s they fill, J assembled from them at a
// pass's outputs (interface_jacobian.hpp), the Newton step with it, and the κ and H it was made
// for (reuse's staleness rule), and Broyden's update of the sensitivities between passes.
//
// Call order: fill sensitivities() (or set_forward_differences()), assemble(), then any number
// of newton_step() while valid(). Not thread-safe; the system must outlive it.
#pragma once

#include <cmath>
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
  // Everything above that a next pass uses (the sensitivities, J's values, valid(), h(),
  // kappa()), as arrays; import_state() of a matrix of the same system takes it back and
  // factorises the same J again (the same numbers: KLU of the same values). Throws
  // std::invalid_argument for arrays that do not fit.
  std::vector<std::vector<double>> export_state() const;
  void import_state(const std::vector<std::vector<double>>& state);
  // s ← s + J⁻¹ r; `residual` holds r on entry and the step on return. Requires valid().
  void newton_step(std::span<double> residual, std::span<double> s);
  // The finite-difference iterate (fd, reuse): a pass with perturbed runs assembles J from
  // them (`evaluated` is set, whether or not J is usable); a pass without uses the kept J. Then
  // newton_step() unless `step` is false (the caller steps itself). False when there is no
  // usable J (the corrector fails the attempt).
  bool finite_difference_iterate(const PassView& pass, std::span<double> residual,
                                 std::span<double> s, bool& evaluated, bool step = true);

  // Broyden's update of the sensitivities from two passes of one attempt (the same T_N, κ, H
  // and history; only the input end values differ): for every subsystem L,
  //   S_L ← S_L + (Δy_L − S_L Δs_L) (D⁻² Δs_L)ᵀ / ‖D⁻¹ Δs_L‖²,
  // Δs_L the change of L's input end values from `s_before` to `s_after` (summed feeds), Δy_L
  // that of its outputs from `outputs_before` to pass.outputs, D its inputs' perturbations
  // (CoupledSystem::feed_max of pass.perturbation: the scale of a correction). Afterwards
  // S_L Δs_L = Δy_L, and S_L is unchanged on the directions D²-orthogonal to Δs_L. A block with
  // Δs_L = 0 is left as it is. No block changes if the pair contradicts one: if for some L and
  // output o
  //   |Δy_o − (S_L Δs_L)_o| > trust · (|Δy_o| + |(S_L Δs_L)_o|)
  // (outputs whose change is within rounding of their value are not compared): the kept J is
  // then from a far H or the response is not linear over the correction, and updating some
  // blocks but not the others gave worse Newton steps than updating none. Then, if any block
  // changed, assemble(pass).
  struct SecantOutcome {
    std::size_t updated = 0;  // blocks changed
    bool usable = true;       // J valid afterwards (false: singular, as assemble())
  };
  SecantOutcome secant_update(const PassView& pass,
                              std::span<const std::vector<double>> outputs_before,
                              std::span<const double> s_before, std::span<const double> s_after,
                              double trust);

 private:
  const system::CoupledSystem& system_;
  InterfaceJacobian jacobian_;
  InputSensitivities dyds_;
  std::vector<std::vector<double>> perturbed_;
  std::vector<double> channel_delta_;
  // One subsystem's change between the two passes of a secant update.
  struct SecantBlock {
    std::vector<double> ds, delta, predicted;  // Δs_L, D, S_L Δs_L
    double norm = 0.0;                         // ‖D⁻¹Δs_L‖²
    bool moved() const { return norm > 0.0 && std::isfinite(norm); }
    bool contradicted(std::span<const double> y, std::span<const double> y0, double trust) const;
  };
  std::vector<SecantBlock> secant_blocks_;
  void measure_change(const PassView& pass, std::size_t i, std::span<const double> s_before,
                      std::span<const double> s_after, SecantBlock& block) const;
  bool valid_ = false;
  double h_ = 0.0;
  int kappa_ = -1;
};

}  // namespace macrostep::corrector
