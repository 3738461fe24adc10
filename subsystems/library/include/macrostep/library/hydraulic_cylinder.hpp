// A double-acting hydraulic cylinder as a Subsystem, built to couple to the hydraulic volume node
// of seed 003 §2.4 (system::HydraulicNodeLaw; MODELS.md F-HYD): the compliance of the fluid is
// the node's (one node per chamber, its volume V_K the chamber plus line volume), so the
// cylinder itself is the rigid piston, and it outputs each chamber's abstract volume V_i and flow
// Q_i into its node (V̇_i = Q_i, seed 003 Eq. 2.88/2.90); the node returns the pressures.
//
//   ẋ = v,  m·v̇ = A_a·p_a − A_b·p_b − d·v − F_c·tanh(v/v_c) + F_rod,
// x: piston position [m] (x grows as chamber a fills: extension), m: moving mass (piston, rod and
// anything rigidly attached), A_a: piston area of chamber a (cap side), A_b: annulus area of
// chamber b (rod side), d: viscous friction, F_c·tanh(v/v_c): Coulomb friction smoothed over v_c.
// Volumes are counted from the initial position x0, so V_i⁰ = 0 in the node law:
//   V_a = −A_a·(x − x0), Q_a = −A_a·v   (extension draws fluid out of node a),
//   V_b =  A_b·(x − x0), Q_b =  A_b·v   (extension pushes fluid into node b).
// Inputs [p_a, p_b] and, if rod_coupled, F_rod: the force on the rod in +x, with the sign
// convention of a body on the left of a SpringDamperLaw (+λ; the chain's right-end input).
// Outputs y = [x, v, V_a, Q_a, V_b, Q_b]: functions of the state only (no feed-through).
// Names: states "x", "v"; outputs "x", "v", "volume_a", "flow_a", "volume_b", "flow_b"; inputs
// "pressure_a", "pressure_b", "rod_force". No end stops: the stroke is the caller's to keep.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct HydraulicCylinderParameters {
  double mass = 0.0;              // m > 0 [kg]
  double area_a = 0.0;            // A_a > 0 [m²]
  double area_b = 0.0;            // A_b > 0 [m²]
  double viscous_friction = 0.0;  // d >= 0 [N·s/m]
  double coulomb_friction = 0.0;  // F_c >= 0 [N]
  double coulomb_speed = 1e-3;    // v_c > 0 [m/s]
  double x0 = 0.0, v0 = 0.0;      // initial position and speed
  bool rod_coupled = true;
};

class HydraulicCylinder final : public model::Subsystem {
 public:
  // Output indices.
  static constexpr std::size_t kPosition = 0, kSpeed = 1, kVolumeA = 2, kFlowA = 3, kVolumeB = 4,
                               kFlowB = 5;

  // Throws std::invalid_argument for parameters outside the ranges above.
  explicit HydraulicCylinder(const HydraulicCylinderParameters& parameters);

  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return parameters_.rod_coupled ? 3 : 2; }
  std::size_t output_size() const override { return 6; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // x m, v m/s, volume_a/b m^3, flow_a/b m^3/s; the states are the first two outputs.
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  // z0 = [x0, v0] (independent of u0), z0' = [v0, force(u0)/m].
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // F_x = x' − v;  F_v = m·v' − (net force).
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

  // Analytic coupling Jacobians (model::Subsystem): ∂y/∂z (constant: 1 and ±areas); ∂F/∂u in
  // the velocity row (−A_a, +A_b, −1).
  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  // The net force on the piston at speed v with inputs u.
  double net_force(double v, std::span<const double> u) const;

 private:
  HydraulicCylinderParameters parameters_;
  std::array<model::StateRole, 2> roles_{model::StateRole::kPosition, model::StateRole::kVelocity};
  model::SparsityPattern pattern_;
};

// The registry description (model = "hydraulic_cylinder") of `p`.
RegisteredModel model_of(const HydraulicCylinderParameters& p);

}  // namespace macrostep::library
