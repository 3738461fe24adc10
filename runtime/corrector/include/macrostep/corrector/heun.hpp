// The "heun" interface Jacobian (seed 004 Eq. 49/50; METHODS.md §8): ∂y/∂s from one step of
// Heun's method over the macro step, applied to every subsystem's ODE linearised at T_N, instead
// of perturbed integrations. For M ż + … = F (F(t, z, ż, u) = 0 with a regular ∂F/∂ż = M):
//   f_z = −M⁻¹ ∂F/∂z,   f_u = −M⁻¹ ∂F/∂u   (at the accepted state z_N, inputs u(T_N))
//   Heun: k1 = f(z_N, u(T_N)),  k2 = f(z_N + H k1, u(T_{N+1})),  z_{N+1} = z_N + H/2 (k1 + k2)
// and the end value s of the step polynomial enters u(t) with its basis ℓ(t), ℓ(T_{N+1}) = 1:
//   ∂z_{N+1}/∂s = H/2 (1 + ℓ_N) f_u + H²/2 ℓ_N f_z f_u,   ∂y/∂s = ∂y/∂z · ∂z_{N+1}/∂s,
// with ℓ_N = ℓ(T_N): 1 for κ = 0 (constant inputs: seed 004 Eq. 49, for the two-mass model
// Eq. 50: ∂x1/∂λ = H²/(2m1), ∂v1/∂λ = H/m1 − d1H²/(2m1²), ∂x1/∂μ = H, ∂v1/∂μ = −c1H²/(2m1)),
// 0 for κ ≥ 1. Seed 004 keeps only the leading terms and drops damping; this is the whole Heun
// step (METHODS T16). Exact to O(H³) in position and O(H²) in velocity for κ = 0; a Newton matrix,
// not a derivative to trust beyond that. Subsystems with a singular ∂F/∂ż (DAE subsystems) or
// direct feed-through cannot give it (seed 004: "a DAE subsystem needs an implicit scheme or its
// underlying ODE").
#pragma once

#include <span>
#include <vector>

#include "macrostep/corrector/interface_jacobian.hpp"

namespace macrostep::corrector {

class HeunSensitivities {
 public:
  // Throws std::invalid_argument naming the first subsystem (1-based) with feed-through.
  explicit HeunSensitivities(const system::CoupledSystem& system);

  // ∂y/∂s of every subsystem into `dyds` for H = T_{N+1} − T_N and the accepted states
  // states[i] (z at T_N) and inputs[i] (u at T_N); constant_inputs: κ = 0. Throws
  // std::runtime_error naming the subsystem if its ∂F/∂ż is singular.
  void fill(double t, double h, bool constant_inputs, std::span<const std::vector<double>> states,
            std::span<const std::vector<double>> inputs, InputSensitivities& dyds) const;

 private:
  // ∂z_{N+1}/∂s of subsystem i, dense column-major n × n_in.
  void state_sensitivity(std::size_t i, double t, double h, bool constant_inputs,
                         std::span<const double> z, std::span<const double> u,
                         std::vector<double>& dzds) const;

  const system::CoupledSystem& system_;
};

}  // namespace macrostep::corrector
