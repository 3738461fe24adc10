// METHODS.md §8 (index-2 constraint coupling), seed 004 App. D Eq. 58-60.
#include "macrostep/system/joint_constraint_law.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "builtin_laws.hpp"

namespace macrostep::system {

JointConstraintLaw::JointConstraintLaw(std::string force_name, std::string velocity_name,
                                       OutputRef x_a, OutputRef v_a, OutputRef x_b, OutputRef v_b)
    : names_{std::move(force_name), std::move(velocity_name)}, reads_{x_a, v_a, x_b, v_b} {}

void JointConstraintLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  if (y_read.size() != 4 || u_out.size() != 2) {
    throw std::invalid_argument("JointConstraintLaw::evaluate: size mismatch");
  }
  u_out[0] = y_read[0] - y_read[2];  // −(x_b − x_a)
  u_out[1] = y_read[1] - y_read[3];  // −(v_b − v_a)
}

void JointConstraintLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (y_read.size() != 4 || dphi_dy.size() != 8) {
    throw std::invalid_argument("JointConstraintLaw::jacobian: size mismatch");
  }
  constexpr double rows[8] = {1.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, -1.0};
  for (std::size_t k = 0; k < 8; ++k) dphi_dy[k] = rows[k];
}

std::vector<std::string> JointConstraintLaw::variable_units(
    std::span<const std::string> read_units) const {
  if (read_units.size() < 2) return {"", ""};
  return {detail::effort_unit(read_units[0]), read_units[1]};
}

LawEntry detail::joint_entry() {
  LawEntry e;
  e.name = "joint";
  e.reads = 4;
  e.read_order = "[x_a, v_a, x_b, v_b]";
  e.writes = {{"force", "lambda"}, {"velocity", "mu"}};
  e.to_form =
      "{force = [...], velocity = [...]} for law \"joint\": the inputs the reaction force λ "
      "and the projection multiplier μ feed";
  e.parse = [](const LawTable&, std::size_t) { return std::make_shared<const LawParameters>(); };
  e.make = [](std::vector<std::string> names, std::span<const OutputRef> reads,
              const LawParameters&) -> std::unique_ptr<CouplingLaw> {
    return std::make_unique<JointConstraintLaw>(std::move(names[0]), std::move(names[1]), reads[0],
                                                reads[1], reads[2], reads[3]);
  };
  return e;
}

}  // namespace macrostep::system
