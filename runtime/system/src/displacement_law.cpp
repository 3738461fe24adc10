// METHODS.md §1.2 (displacement coupling), seed 000 Eq. 2.6 / 2.8.
#include "macrostep/system/displacement_law.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include "builtin_laws.hpp"

namespace macrostep::system {

DisplacementLaw::DisplacementLaw(std::string position_name, std::string velocity_name,
                                 OutputRef position, OutputRef velocity)
    : names_{std::move(position_name), std::move(velocity_name)}, reads_{position, velocity} {}

void DisplacementLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  if (y_read.size() != 2 || u_out.size() != 2) {
    throw std::invalid_argument("DisplacementLaw::evaluate: size mismatch");
  }
  u_out[0] = y_read[0];
  u_out[1] = y_read[1];
}

void DisplacementLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (y_read.size() != 2 || dphi_dy.size() != 4) {
    throw std::invalid_argument("DisplacementLaw::jacobian: size mismatch");
  }
  dphi_dy[0] = 1.0;  // ∂x̃/∂x
  dphi_dy[1] = 0.0;  // ∂x̃/∂v
  dphi_dy[2] = 0.0;  // ∂ṽ/∂x
  dphi_dy[3] = 1.0;  // ∂ṽ/∂v
}

LawEntry detail::displacement_entry() {
  LawEntry e;
  e.name = "displacement";
  e.reads = 2;
  e.read_order = "[position, velocity]";
  e.writes = {{"position", "position"}, {"velocity", "velocity"}};
  e.to_form = "{position = ..., velocity = ...} for law \"displacement\"";
  e.parse = [](const LawTable&, std::size_t) { return std::make_shared<const LawParameters>(); };
  e.make = [](std::vector<std::string> names, std::span<const OutputRef> reads,
              const LawParameters&) -> std::unique_ptr<CouplingLaw> {
    return std::make_unique<DisplacementLaw>(std::move(names[0]), std::move(names[1]), reads[0],
                                             reads[1]);
  };
  return e;
}

}  // namespace macrostep::system
