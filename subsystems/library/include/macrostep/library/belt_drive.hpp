// A belt drive with a tensioner idler as a Subsystem (the multi-domain example): two
// pulleys joined by an elastic belt, whose slack span runs over an idler that a tensioner pushes
// into it. Rotational mechanics as in the drive-train segment (J·φ̈ = Σ M), the belt as two
// linear elastic spans (seed 003 §2.6 style lumped model; slip and a slack belt are not modelled).
//
//   s = r_1·φ_1 − r_2·φ_2                              (how far the driver pulled the tight span)
//   T_t = c_b·(e_0 + s) + d_b·ṡ                        tight-span tension [N]
//   T_s = c_b·(e_0 − s + k_g·x) + d_b·(−ṡ + k_g·v)     slack-span tension [N]
//   J_1·ω̇_1 = r_1·(T_s − T_t) − b_1·ω_1 − τ_left       (driver pulley)
//   J_2·ω̇_2 = r_2·(T_t − T_s) − b_2·ω_2 + τ_right      (driven pulley)
//   m_i·v̇   = −k_g·T_s − b_i·v − F_idler               (idler, x its travel into the slack span)
// with e_0 = T_0/c_b the stretch of both spans at the initial state (T_0 the pretension), k_g the
// slack span's lengthening per metre of idler travel (2·sin(β/2), β the belt's wrap angle on the
// idler). The ends take their torques with the drive train's sign convention (a left end
// receives −τ_left, a right end +τ_right, as a RotationalSpringDamperLaw writes them); the idler
// is the right body of a spring_damper whose left body is the tensioner's rod, so it receives
// −F_idler. The linear spans hold while both tensions stay positive (the example keeps them so;
// the outputs tension_tight and tension_slack show it).
//
// States z = [φ_1, ω_1, φ_2, ω_2, x, v] (roles position/velocity), names "phi_1", "omega_1",
// "phi_2", "omega_2", "x_idler", "v_idler". Inputs [tau_left (if left_coupled), tau_right (if
// right_coupled), idler_force]. Outputs y = [φ_1, ω_1, φ_2, ω_2, x, v, T_t, T_s], names as the
// states plus "tension_tight", "tension_slack": functions of the state only (no feed-through).
// Analytic sparse Jacobian and coupling Jacobians. Immutable after construction.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct BeltDriveParameters {
  double driver_inertia = 0.0;              // J_1 > 0 [kg·m²] (pulley and its hub)
  double driven_inertia = 0.0;              // J_2 > 0 [kg·m²]
  double driver_radius = 0.0;               // r_1 > 0 [m]
  double driven_radius = 0.0;               // r_2 > 0 [m]
  double span_stiffness = 0.0;              // c_b > 0 [N/m] of each span
  double span_damping = 0.0;                // d_b >= 0 [N·s/m] of each span
  double pretension = 0.0;                  // T_0 >= 0 [N]
  double idler_mass = 0.0;                  // m_i > 0 [kg] (idler pulley, arm reduced to it)
  double idler_factor = 1.0;                // k_g > 0: slack-span length per idler travel
  double idler_damping = 0.0;               // b_i >= 0 [N·s/m] (guide friction)
  std::array<double, 2> bearing_damping{};  // b_1, b_2 >= 0 [N·m·s/rad]
  std::array<double, 2> speed0{};           // ω_1, ω_2 at t = 0 [rad/s]
  bool left_coupled = true, right_coupled = true;
};

class BeltDrive final : public model::Subsystem {
 public:
  // Output indices.
  static constexpr std::size_t kDriverAngle = 0, kDriverSpeed = 1, kDrivenAngle = 2,
                               kDrivenSpeed = 3, kIdlerPosition = 4, kIdlerSpeed = 5,
                               kTightTension = 6, kSlackTension = 7;

  // Throws std::invalid_argument for parameters outside the ranges above.
  explicit BeltDrive(const BeltDriveParameters& parameters);

  std::size_t state_size() const override { return 6; }
  std::size_t input_size() const override;
  std::size_t output_size() const override { return 8; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // phi_k rad, omega_k rad/s, x_idler m, v_idler m/s, tension_tight/slack N; the states are the
  // first six outputs, with their units and descriptions.
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  // z0 = [0, ω_1⁰, 0, ω_2⁰, 0, 0]; z0' from the forces with u0.
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // Kinematic rows q' − w; dynamic rows (inertia)·w' − (net torque or force).
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  // [T_t, T_s] at state z.
  std::array<double, 2> tensions(std::span<const double> z) const;

 private:
  // The inputs as [τ_left, τ_right, F_idler] (zero for an uncoupled end).
  std::array<double, 3> inputs(std::span<const double> u) const;
  // Net torques on the pulleys and net force on the idler (the dynamic rows' right-hand sides).
  std::array<double, 3> loads(std::span<const double> z, std::span<const double> u) const;
  // The dense 6×6 dF/dz + cj·dF/dz' (constant apart from cj: the model is linear).
  std::array<std::array<double, 6>, 6> dense_jacobian(double cj) const;

  BeltDriveParameters p_;
  std::array<model::StateRole, 6> roles_;
  model::SparsityPattern pattern_;
};

// The description of a belt_drive with these parameters (model_registry.hpp).
RegisteredModel model_of(const BeltDriveParameters& p);

}  // namespace macrostep::library
