// The torsional spring/damper between two rotating bodies as a coupling law (seed 003 §2.6,
// table "rotational mechanic": y = [φ, φ̇], u = M = c_r·Δφ; MODELS.md §1.2 for the law shape):
//   τ = c·Δφ + d·Δω + C·sgn(Δφ)|Δφ|^e_x + D·sgn(Δω)|Δω|^e_v,
//   Δφ = φ_right − φ_left, Δω = ω_right − ω_left,
// i.e. the chain's element law (seed 000 Eq. 2.9, general exponents D-2) with angles and speeds
// in place of positions and velocities; library::ElementLaw carries its coefficients (c [N·m/rad],
// d [N·m·s/rad], C, D, e_x, e_v).
//
// Sign convention (as the chain's cut element, seed 000 Eq. 2.16): the shaft twisted by Δφ > 0
// pulls the left body forward (+τ) and the right body back (−τ). library::DriveTrainSegment
// follows it: its right-end input enters as +τ, its left-end input as −τ.
#pragma once

#include <array>
#include <span>
#include <string>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

class RotationalSpringDamperLaw final : public CouplingLaw {
 public:
  // name: the coupling variable (the result column, "shaft_2.torque"). Reads
  // [φ_left, ω_left, φ_right, ω_right] in this order.
  RotationalSpringDamperLaw(std::string name, const library::ElementLaw& shaft,
                            OutputRef angle_left, OutputRef speed_left, OutputRef angle_right,
                            OutputRef speed_right);

  std::span<const OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override {
    return std::span<const std::string>(&name_, 1);
  }
  // u_out[0] = τ(φ_right − φ_left, ω_right − ω_left).
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // [−k, −d, k, d], k = ∂τ/∂Δφ (torsional stiffness), d = ∂τ/∂Δω (damping) at the same point.
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  // The torque depends on the bodies' states only.
  bool has_feedthrough() const override { return false; }

  const library::ElementLaw& shaft() const { return shaft_; }

 private:
  std::string name_;
  library::ElementLaw shaft_;
  std::array<OutputRef, 4> reads_;
};

}  // namespace macrostep::system
