// A torsional drive-train segment as a Subsystem (seed 003 §2.6, rotational mechanics:
// J·φ̈ = Σ M, y = [φ, φ̇]): n inertias in a row joined by n−1 shafts, the rotational analogue
// of the chain segment (MODELS.md §1.1).
//
//   φ̇_k = ω_k,  J_k·ω̇_k = −τ_{k−1,k} + τ_{k,k+1} − b_k·ω_k + T_k(t),
//   τ_{k,k+1} = shaft_k(φ_{k+1} − φ_k, ω_{k+1} − ω_k)   (ElementLaw: c, d, C, D, e_x, e_v),
//   T_k(t) = T_k,const + ΔT_k·½·(1 + tanh((t − t_k)/δ_k))  (a smooth load step, any sign).
// The ends: a coupled end takes its torque from an input with the chain's sign convention
// (seed 000 Eq. 2.16): the left end receives −τ_left (the torque of the shaft to its left, as a
// RotationalSpringDamperLaw writes it), the right end +τ_right. An uncoupled end is free.
// Inputs: [tau_left (if left coupled), tau_right (if right coupled)].
// Outputs: y = [φ_1, φ_n, ω_1, ω_n] (the end inertias' states; no feed-through).
// Names (local, 1-based; a system prefixes them with the subsystem's name): states "phi_k",
// "omega_k"; outputs "phi_1", "phi_<n>", "omega_1", "omega_<n>"; inputs "tau_left", "tau_right".
// State layout interleaved z = [φ_1, ω_1, φ_2, ω_2, ...] (banded Jacobian, bandwidth 3); roles
// position/velocity. Immutable after construction.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

// T(t) = constant + step·½·(1 + tanh((t − step_time)/step_width)) [N·m].
struct LoadTorque {
  double constant = 0.0, step = 0.0, step_time = 0.0, step_width = 1e-3;
  double torque(double t) const;
};

struct DriveTrainParameters {
  std::vector<double> inertia;          // J_k > 0 [kg·m²], n >= 1
  std::vector<ElementLaw> shaft;        // n − 1 shafts, shaft[k] joins inertia k and k + 1
  std::vector<double> bearing_damping;  // b_k >= 0 [N·m·s/rad]; empty = none
  std::vector<LoadTorque> load;         // per inertia; empty = none
  std::vector<double> angle0, speed0;   // initial φ_k [rad], ω_k [rad/s], size n
  bool left_coupled = true, right_coupled = true;
};

class DriveTrainSegment final : public model::Subsystem {
 public:
  // Throws std::invalid_argument for inconsistent sizes, a non-positive inertia or a negative
  // bearing damping.
  explicit DriveTrainSegment(const DriveTrainParameters& parameters);

  std::size_t inertias() const { return inertia_.size(); }
  std::size_t state_size() const override { return 2 * inertias(); }
  std::size_t input_size() const override;
  std::size_t output_size() const override { return 4; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // phi_k rad, omega_k rad/s; "angle of inertia k", "angular velocity of inertia k".
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  // z0 from angle0/speed0 (independent of u0); z0' from the torques with u0.
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // F_φ,k = φ'_k − ω_k;  F_ω,k = J_k·ω'_k − (net torque on inertia k).
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

  // Analytic coupling Jacobians (model::Subsystem): ∂y/∂z selects states (entries 1);
  // ∂F/∂u has one entry per input in the velocity row of its end body.
  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  // Net torque on every inertia (the right-hand side J·ω'), size inertias().
  void net_torques(double t, std::span<const double> z, std::span<const double> u,
                   std::span<double> torque) const;

 private:
  // Calls sink(k, net torque on inertia k) for k = 0..n−1 in order, each shaft law evaluated once.
  template <class Sink>
  void sweep_torques(double t, const double* z, const double* u, Sink&& sink) const {
    const std::size_t n = inertias();
    // Torque of the shaft left of inertia k; an uncoupled end is free (zero).
    double tau_prev = left_coupled_ ? u[0] : 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      double tau_next = 0.0;
      if (k + 1 < n) {
        tau_next = shaft_[k].force(z[2 * k + 2] - z[2 * k], z[2 * k + 3] - z[2 * k + 1]);
      } else if (right_coupled_) {
        tau_next = u[left_coupled_ ? 1 : 0];
      }
      sink(k, -tau_prev + tau_next - bearing_damping_[k] * z[2 * k + 1] + load_[k].torque(t));
      tau_prev = tau_next;
    }
  }

  std::vector<double> inertia_, bearing_damping_;
  std::vector<ElementLaw> shaft_;
  std::vector<LoadTorque> load_;
  std::vector<double> angle0_, speed0_;
  bool left_coupled_, right_coupled_;
  std::vector<model::StateRole> roles_;
  model::SparsityPattern pattern_;
};

}  // namespace macrostep::library
