// A permanent-magnet DC motor behind an ideal gearbox as a Subsystem (the drive train's
// electric motor and gear ratio). Armature circuit and rotor:
//
//   L·i' = V − R·i − k·ω,   φ' = ω,   J·ω' = k·i − b·ω + τ/n
//
// with i the armature current, φ, ω the rotor angle and speed, k the torque (= back-EMF)
// constant, V the input "voltage" and τ the input "tau_right": the torque of the shaft coupled
// to the gearbox's output (the right end of a drive train: +τ_right, as a
// RotationalSpringDamperLaw writes it). The gearbox (ratio n >= 1, no inertia, no losses) turns
// the rotor's φ, ω into φ/n, ω/n at its output and the output torque τ into τ/n on the rotor.
// Outputs y = [phi, omega, current] = [φ/n, ω/n, i] (no feed-through). States "current", "phi",
// "omega" (motor side; roles other, position, velocity). Steady state with τ = 0:
//   ω = k·V/(k² + R·b),   i = b·ω/k.
// Immutable after construction; analytic Jacobians.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct DcMotorParameters {
  double resistance = 1.0;       // R > 0 [Ω]
  double inductance = 1e-3;      // L > 0 [H]
  double torque_constant = 0.1;  // k > 0 [N·m/A] = [V·s/rad]
  double inertia = 1e-3;         // J > 0 [kg·m²], rotor
  double damping = 0.0;          // b >= 0 [N·m·s/rad], rotor bearing
  double gear_ratio = 1.0;       // n >= 1: rotor turns per output turn
  double current0 = 0.0;         // i(0) [A]
  double angle0 = 0.0;           // output-side φ(0)/n [rad]
  double speed0 = 0.0;           // output-side ω(0)/n [rad/s]
  bool right_coupled = true;     // the output shaft takes tau_right (else a free output)
};

class DcMotor final : public model::Subsystem {
 public:
  // Throws std::invalid_argument for a non-positive R, L, k, J, a negative b, a ratio below 1,
  // or non-finite values.
  explicit DcMotor(const DcMotorParameters& parameters);

  std::size_t state_size() const override { return 3; }
  std::size_t input_size() const override { return p_.right_coupled ? 2 : 1; }
  std::size_t output_size() const override { return 3; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // phi rad, omega rad/s, current A; states current A, phi rad, omega rad/s (rotor side).
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // F_i = L·i' − (V − R·i − k·ω);  F_φ = φ' − ω;  F_ω = J·ω' − (k·i − b·ω + τ/n).
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

 private:
  double load_torque(std::span<const double> u) const { return p_.right_coupled ? u[1] : 0.0; }

  DcMotorParameters p_;
  std::vector<model::StateRole> roles_;
  model::SparsityPattern pattern_;
};

// The description of a dc_motor with these parameters (model_registry.hpp).
RegisteredModel model_of(const DcMotorParameters& p);

}  // namespace macrostep::library
