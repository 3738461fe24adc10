// The spring/damper of a cut element as a coupling law (METHODS.md §1.2-1.3; seed 000
// Eq. 2.5, 2.9, 2.16-2.20): λ = F_SD(x_right − x_left, v_right − v_left) with the element's own
// law (general exponents, D-2): the force/force coupling of two bodies through a cut element.
// library::ElementLaw (the element law of Eq. 2.9) is declared with the chain's parameters.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/system/coupling_law.hpp"
#include "macrostep/system/law_registry.hpp"

namespace macrostep::system {

// The parameters of the spring_damper and rotational_spring_damper laws (law_registry.hpp).
struct SpringDamperParameters final : LawParameters {
  explicit SpringDamperParameters(const library::ElementLaw& e) : element(e) {}
  library::ElementLaw element;
};

// The element-law keys c, d, C, D (>= 0) and ex, ev (>= 1) of a table (seed 000 Eq. 2.9), each
// if given. The one reader of the law: [model.element], [[model.element_override]], a drive
// train's shafts and the spring_damper / rotational_spring_damper connections all use it, with
// its messages ("must be >= 0 (got -1)" at the key). Other keys are the caller's to check.
struct ElementKeys {
  std::optional<double> c, d, C, D, ex, ev;
  bool any() const { return c || d || C || D || ex || ev; }
};
ElementKeys read_element_keys(const LawTable& table);

// The law of a table (read_element_keys): c required, the others library::ElementLaw's
// defaults.
library::ElementLaw read_element_law(const LawTable& table);

class SpringDamperLaw final : public CouplingLaw {
 public:
  // name: the coupling variable ("lambda_L"). Reads [x_left, v_left, x_right, v_right].
  SpringDamperLaw(std::string name, const library::ElementLaw& element, OutputRef x_left,
                  OutputRef v_left, OutputRef x_right, OutputRef v_right);

  std::span<const OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override {
    return std::span<const std::string>(&name_, 1);
  }
  // u_out[0] = element.force(x_right − x_left, v_right − v_left).
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // [−k, −d, k, d] with k = ∂F/∂Δx (stiffness), d = ∂F/∂Δv (damping) at the same Δx, Δv.
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  // The force depends on states only.
  bool has_feedthrough() const override { return false; }
  // The element's force, "N" between positions in m, or its torque, "N m" between angles in rad
  // (the rotational law); "" between positions of another or no unit.
  std::vector<std::string> variable_units(std::span<const std::string> read_units) const override;
  // "spring-damper effort, c = …, d = … (+ on the left body, − on the right)".
  std::vector<std::string> variable_descriptions() const override;
  // Without damping (d = D = 0): u̇ = ∂F/∂Δx·(v_right − v_left).
  bool has_rate() const override { return element_.d == 0.0 && element_.D == 0.0; }
  void rate(std::span<const double> y_read, std::span<double> u_dot) const override;

  const library::ElementLaw& element() const { return element_; }

 private:
  std::string name_;
  library::ElementLaw element_;
  std::array<OutputRef, 4> reads_;
};

}  // namespace macrostep::system
