// One body of the two-mass oscillator family as a Subsystem (METHODS.md §1.2; seed 000
// §2.1.1-2.1.3, Eq. 2.5-2.8; seed 001 §4): a mass on a ground spring/damper that is coupled to the
// rest of the system either by a force (force coupling) or through a coupling element it holds
// itself and that is driven by the other body's position and velocity (displacement coupling):
//
//   ẋ = v + s·μ,   m·v̇ = −c·x − d·v + s·f − F,
//   F = c_c·Δx + d_c·Δv + C_c·Δx³ + D_c·Δv³,   Δx = x − x̃, Δv = v − ṽ
//
// (the cubic terms are seed 000's nonlinear coupling element, Eq. 5.2, as the chain's
// spring_damper law has them; 0 by default: the linear element of Eq. 2.6-2.8)
// with f the input "force" (if force_input; s = force_sign, ±1), μ the input "mu" (if
// velocity_input; otherwise 0) and x̃, ṽ the inputs "x_in", "v_in" (if displacement_input;
// otherwise F = 0). Outputs y = [x, v] and, with displacement
// input, "force" = F: the element force the body's element transmits, which depends on x̃, ṽ at
// once — direct feed-through (D = [−c_c − 3C_c·Δx², −d_c − 3D_c·Δv²], has_feedthrough();
// affine in x̃, ṽ only without the cubic terms, outputs_affine_in_inputs()). So
//   F/F (Eq. 2.5): two force-input masses and a spring_damper law;
//   F/D with feed-through (Eq. 2.7): mass 1 force input, mass 2 displacement input, a
//     displacement law 1 → 2 and a signal law mass2.force → mass1.force;
//   D/D (Eq. 2.8): two displacement-input masses, each with a copy of the element, and two
//     displacement laws (their force outputs unused, so no feed-through is read);
//   a joint (seed 004 App. D, Eq. 58): two masses with force and velocity inputs, force_sign
//     +1 and −1, and a joint law whose multipliers λ (force) and μ (mu) hold x_1 = x_2.
// States "x", "v" (roles position, velocity); inputs in the order force, mu, x_in, v_in (those
// present). z0 = [x0, v0] whatever the inputs. Immutable after construction; analytic Jacobians.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct OscillatorMassParameters {
  double mass = 1.0;                      // m > 0 [kg]
  double stiffness = 0.0, damping = 0.0;  // ground element c, d >= 0
  bool force_input = false;
  double force_sign = 1.0;  // s: +1 or −1 (the side of the cut element the body is on)
  bool displacement_input = false;
  bool velocity_input = false;  // μ: ẋ = v + s·μ (a joint's projection multiplier)
  double coupling_stiffness = 0.0, coupling_damping = 0.0;  // c_c, d_c >= 0 of the held element
  // C_c, D_c >= 0: the held element's cubic terms C_c·Δx³ + D_c·Δv³ (seed 000 Eq. 5.2)
  double coupling_cubic_stiffness = 0.0, coupling_cubic_damping = 0.0;
  double x0 = 0.0, v0 = 0.0;
};

class OscillatorMass final : public model::Subsystem {
 public:
  // Throws std::invalid_argument for m <= 0, a negative or non-finite coefficient, a force_sign
  // other than ±1, or no input at all.
  explicit OscillatorMass(const OscillatorMassParameters& parameters);

  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override;
  std::size_t output_size() const override { return p_.displacement_input ? 3 : 2; }
  bool has_feedthrough() const override { return p_.displacement_input; }
  // The element force is affine in x̃, ṽ unless the element has cubic terms.
  bool outputs_affine_in_inputs() const override { return !cubic(); }
  // Only "force" (output 2) depends on x_in, v_in.
  bool output_feeds_through(std::size_t o) const override {
    return p_.displacement_input && o == 2;
  }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // x m, v m/s, force N; the states are the first two outputs.
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;
  // D = ∂y/∂u: only the force output depends on x_in, v_in (−∂F/∂Δx, −∂F/∂Δv).
  void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> values) const override;

  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  // The net force m·v̇ at (z, u) and the element force F.
  double net_force(std::span<const double> z, std::span<const double> u) const;
  double element_force(std::span<const double> z, std::span<const double> u) const;

 private:
  std::size_t velocity_offset() const { return p_.force_input ? 1 : 0; }
  std::size_t displacement_offset() const {
    return velocity_offset() + (p_.velocity_input ? 1 : 0);
  }
  bool cubic() const {
    return p_.coupling_cubic_stiffness != 0.0 || p_.coupling_cubic_damping != 0.0;
  }
  // ∂F/∂Δx and ∂F/∂Δv of the held element at (z, u): c_c + 3C_c·Δx², d_c + 3D_c·Δv² (exactly
  // c_c, d_c without cubic terms; 0, 0 without the element).
  std::array<double, 2> element_slopes(std::span<const double> z, std::span<const double> u) const;
  double mu(std::span<const double> u) const {
    return p_.velocity_input ? p_.force_sign * u[velocity_offset()] : 0.0;
  }

  OscillatorMassParameters p_;
  std::vector<model::StateRole> roles_;
  model::SparsityPattern pattern_;
};

// The description of a oscillator_mass with these parameters (model_registry.hpp).
RegisteredModel model_of(const OscillatorMassParameters& p);

}  // namespace macrostep::library
