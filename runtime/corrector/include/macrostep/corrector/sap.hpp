// The "sap" interface Jacobian (METHODS.md §4.5, D-19, D-20; seed 000 App. A): the first term
// of the series of the input sensitivities, without perturbed runs. For M v' = h + B u and an
// input polynomial whose end value s_k moves by one unit (its basis ℓ_{N+1}(t) is added),
//   ∂q/∂s_k ≈ C^κ_pos H² (M⁻¹B)_{:,k},   ∂v/∂s_k ≈ C^κ_vel H (M⁻¹B)_{:,k}
// with the variable-step constants of §5.2 (D-19). Exact for a free body (no stiffness or
// damping between the input and the output); an approximation otherwise (App. A.3-A.4).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/corrector/interface_jacobian.hpp"

namespace macrostep::corrector {

// The first subsystem (0-based) whose model cannot give its input accelerations
// (model::Subsystem::input_acceleration), which the sap Jacobian needs of every subsystem;
// nullopt if all can. For the check before a run, which names the subsystem by its name.
std::optional<std::size_t> subsystem_without_input_accelerations(
    const system::CoupledSystem& system);

class SapSensitivities {
 public:
  // Asks every subsystem for model::Subsystem::input_acceleration(); throws
  // std::invalid_argument naming the first subsystem (1-based) that cannot give it.
  explicit SapSensitivities(const system::CoupledSystem& system);

  // ∂y/∂s of every subsystem into `dyds` for the step's constants and H = T_{N+1} − T_N.
  void fill(const control::ErrorConstants& constants, double h, InputSensitivities& dyds) const;

 private:
  std::vector<std::vector<double>> acceleration_;     // per subsystem: outputs × inputs
  std::vector<std::vector<model::StateRole>> roles_;  // per subsystem: one per output
};

}  // namespace macrostep::corrector
