// An ideal joint between two bodies as a constraint coupling (seed 004, METHODS.md §8; the
// two-mass model of seed 004 App. D, Eq. 58-60): the bodies a and b are not joined by a spring
// but held together, x_b − x_a = 0, in the stabilised index-2 (GGL) form. Its coupling variables
// are the multipliers: the reaction force λ (body a gets +λ, body b −λ in its force balance) and
// the projection multiplier μ (ẋ_a = v_a + μ, ẋ_b = v_b − μ), and the coupling conditions are the
// constraints on position and velocity level,
//   g(y) = [x_b − x_a, v_b − v_a] = 0   at every macro point,
// which the implicit corrector solves for [λ, μ] (D-45, D-46: |μ| is a drift diagnostic). No φ
// gives the multipliers, so the law is a constraint (CouplingLaw::is_constraint): evaluate()
// returns r = −g(y) and jacobian() ∂r/∂y. Reads [x_a, v_a, x_b, v_b] in this order.
#pragma once

#include <array>
#include <span>
#include <string>

#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

class JointConstraintLaw final : public CouplingLaw {
 public:
  // force_name, velocity_name: the variables λ and μ (result columns).
  JointConstraintLaw(std::string force_name, std::string velocity_name, OutputRef x_a,
                     OutputRef v_a, OutputRef x_b, OutputRef v_b);

  std::span<const OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override { return names_; }
  // r = −g = [x_a − x_b, v_a − v_b].
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // ∂r/∂y = [[1, 0, −1, 0], [0, 1, 0, −1]].
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  bool has_feedthrough() const override { return false; }
  bool is_constraint() const override { return true; }
  // λ a force, "N" between positions in m ("N m" between angles in rad); μ enters the position
  // rows (x' = v + μ): the unit of v_a.
  std::vector<std::string> variable_units(std::span<const std::string> read_units) const override;
  std::vector<std::string> variable_descriptions() const override {
    return {"joint reaction force (+ on body a, − on body b)",
            "joint projection multiplier (ẋ_a = v_a + μ, ẋ_b = v_b − μ; a drift diagnostic)"};
  }

 private:
  std::array<std::string, 2> names_;
  std::array<OutputRef, 4> reads_;
};

}  // namespace macrostep::system
