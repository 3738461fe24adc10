// A hydraulic line with its own compliant chamber as a Subsystem, built to couple to the volume
// node of seed 003 §2.4 (system::HydraulicNodeLaw; MODELS.md F-HYD): the hydraulic analogue of
// one oscillator of the F-2.8 stability test (seed 003 §2.3.2). The fluid column of the line
// (density ρ, length L, cross-section A) has the inertance I = ρ·L/A; it connects a closed
// chamber of its own (volume V_C, bulk modulus E_C: stiffness k = E_C/V_C) to the node:
//
//   V̇ = Q,   I·Q̇ = p_C − p,   p_C = p_C0 − k·(V − V0),
//
// V: the volume delivered into the node (the chamber lost as much), Q: the flow into the node,
// p: the node pressure (input "pressure"), p_C: the chamber pressure. So I·V̈ + k·V = const − p:
// a mass–spring oscillator with V ↔ x, Q ↔ v, p ↔ force, k ↔ ground stiffness, I ↔ mass, and
// the node's E/V_K the coupling spring (a second line with x_B ↔ −V_B gives F-2.8's pair).
// Outputs y = [V, Q, p_C] (functions of the state only: no feed-through). States "volume",
// "flow" (roles position, velocity). The outputs V and Q have nominals (output_nominal, the
// macro-step controller's scale of them) from the line itself unless given: V_n = V_C·(1 bar)/E_C,
// the volume that moves the chamber pressure by 1 bar, and Q_n = V_n·sqrt(k/I), that volume at the
// line's own angular frequency; the mechanical atol keys then resolve a line whose volumes swing
// by 1e-7 m³. The states keep nominal 1 (the solver's atol in the model's units: a state nominal
// that size over-tightened the studies' solver tolerance, docs/design/methods.md D-53).
// Immutable after construction; analytic Jacobians.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct HydraulicLineParameters {
  double density = 850.0;             // ρ > 0 [kg/m³]
  double length = 0.0;                // L > 0 [m]
  double area = 0.0;                  // A > 0 [m²]
  double chamber_volume = 0.0;        // V_C > 0 [m³]
  double chamber_modulus = 0.0;       // E_C > 0 [Pa]
  double chamber_pressure = 0.0;      // p_C0 [Pa]: the chamber pressure at V = V0
  double volume0 = 0.0, flow0 = 0.0;  // V0 [m³], Q0 [m³/s]
  // The nominals V_n [m³] and Q_n [m³/s], >= 0; 0: derived from the line (above).
  double volume_nominal = 0.0, flow_nominal = 0.0;
};

class HydraulicLine final : public model::Subsystem {
 public:
  static constexpr std::size_t kVolume = 0, kFlow = 1, kChamberPressure = 2;

  // Throws std::invalid_argument for parameters outside the ranges above.
  explicit HydraulicLine(const HydraulicLineParameters& parameters);

  // I = ρ·L/A [kg/m⁴] and k = E_C/V_C [Pa/m³].
  double inertance() const { return inertance_; }
  double stiffness() const { return stiffness_; }

  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 3; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  double output_nominal(std::size_t i) const override { return i < 2 ? nominals_[i] : 1.0; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  // z0 = [V0, Q0], z0' = [Q0, (p_C0 − p(u0))/I].
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // F_V = V' − Q;  F_Q = I·Q' − (p_C(V) − p).
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

  // ∂y/∂z: V, Q and p_C = p_C0 − k·(V − V0); ∂F/∂u: the flow row, +1.
  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

 private:
  double chamber_pressure(double volume) const;

  HydraulicLineParameters parameters_;
  double inertance_ = 0.0, stiffness_ = 0.0;
  std::array<model::StateRole, 2> roles_{model::StateRole::kPosition, model::StateRole::kVelocity};
  std::array<double, 2> nominals_{1.0, 1.0};  // V_n, Q_n
  model::SparsityPattern pattern_;
};

// The registry description (model = "hydraulic_line") of `p`.
RegisteredModel model_of(const HydraulicLineParameters& p);

}  // namespace macrostep::library
