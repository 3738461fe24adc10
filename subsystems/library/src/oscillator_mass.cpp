// One body of the two-mass oscillator family (oscillator_mass.hpp; METHODS.md §1.2, seed 000
// Eq. 2.5-2.8).
#include "macrostep/library/oscillator_mass.hpp"

#include <cassert>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

void check_coefficient(double value, const char* name) {
  if (!std::isfinite(value) || value < 0.0) {
    throw std::invalid_argument(std::string("oscillator mass: ") + name +
                                " must be finite and >= 0");
  }
}

}  // namespace

OscillatorMass::OscillatorMass(const OscillatorMassParameters& parameters) : p_(parameters) {
  if (!std::isfinite(p_.mass) || p_.mass <= 0.0) {
    throw std::invalid_argument("oscillator mass: mass must be finite and > 0");
  }
  check_coefficient(p_.stiffness, "stiffness");
  check_coefficient(p_.damping, "damping");
  check_coefficient(p_.coupling_stiffness, "coupling stiffness");
  check_coefficient(p_.coupling_damping, "coupling damping");
  check_coefficient(p_.coupling_cubic_stiffness, "cubic coupling stiffness");
  check_coefficient(p_.coupling_cubic_damping, "cubic coupling damping");
  if (p_.force_sign != 1.0 && p_.force_sign != -1.0) {
    throw std::invalid_argument("oscillator mass: force_sign must be 1 or -1");
  }
  if (!p_.force_input && !p_.displacement_input) {
    throw std::invalid_argument(
        "oscillator mass: needs a force input or a displacement input (it must be coupled)");
  }
  if (!std::isfinite(p_.x0) || !std::isfinite(p_.v0)) {
    throw std::invalid_argument("oscillator mass: x0 and v0 must be finite");
  }
  roles_ = {model::StateRole::kPosition, model::StateRole::kVelocity};
  pattern_.n = 2;
  pattern_.column_start = {0, 2, 4};
  pattern_.row_index = {0, 1, 0, 1};
}

std::size_t OscillatorMass::input_size() const {
  return (p_.force_input ? 1u : 0u) + (p_.velocity_input ? 1u : 0u) +
         (p_.displacement_input ? 2u : 0u);
}

std::string OscillatorMass::state_name(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("OscillatorMass::state_name: index out of range");
  return i == 0 ? "x" : "v";
}

std::string OscillatorMass::output_name(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("OscillatorMass::output_name: out of range");
  static const char* const names[] = {"x", "v", "force"};
  return names[i];
}

std::string OscillatorMass::output_unit(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("OscillatorMass::output_unit: out of range");
  static const char* const units[] = {"m", "m/s", "N"};
  return units[i];
}

std::string OscillatorMass::state_unit(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("OscillatorMass::state_unit: out of range");
  return output_unit(i);
}

std::string OscillatorMass::state_description(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("OscillatorMass::state_description: out of range");
  return output_description(i);
}

std::string OscillatorMass::output_description(std::size_t i) const {
  if (i >= output_size())
    throw std::out_of_range("OscillatorMass::output_description: out of range");
  static const char* const text[] = {"position of the body", "velocity of the body",
                                     "force of the held coupling element"};
  return text[i];
}

std::string OscillatorMass::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("OscillatorMass::input_name: out of range");
  if (p_.force_input && i == 0) return "force";
  if (p_.velocity_input && i == velocity_offset()) return "mu";
  return i == displacement_offset() ? "x_in" : "v_in";
}

bool OscillatorMass::input_is_effort(std::size_t i) const {
  // The applied force; x_in, v_in are kinematic and mu is a constraint's multiplier (one joint).
  return p_.force_input && i == 0;
}

double OscillatorMass::element_force(std::span<const double> z, std::span<const double> u) const {
  if (!p_.displacement_input) return 0.0;
  const std::size_t k = displacement_offset();
  const double dx = z[0] - u[k], dv = z[1] - u[k + 1];
  const double linear = p_.coupling_stiffness * dx + p_.coupling_damping * dv;
  // Without cubic terms the linear element's operations alone (results of the linear models
  // stay bit-identical).
  if (!cubic()) return linear;
  return linear + p_.coupling_cubic_stiffness * dx * dx * dx +
         p_.coupling_cubic_damping * dv * dv * dv;
}

std::array<double, 2> OscillatorMass::element_slopes(std::span<const double> z,
                                                     std::span<const double> u) const {
  if (!p_.displacement_input) return {0.0, 0.0};
  if (!cubic()) return {p_.coupling_stiffness, p_.coupling_damping};
  const std::size_t k = displacement_offset();
  const double dx = z[0] - u[k], dv = z[1] - u[k + 1];
  return {p_.coupling_stiffness + 3.0 * p_.coupling_cubic_stiffness * dx * dx,
          p_.coupling_damping + 3.0 * p_.coupling_cubic_damping * dv * dv};
}

double OscillatorMass::net_force(std::span<const double> z, std::span<const double> u) const {
  double f = -p_.stiffness * z[0] - p_.damping * z[1] - element_force(z, u);
  if (p_.force_input) f += p_.force_sign * u[0];
  return f;
}

void OscillatorMass::initial_state(std::span<const double> u0, std::span<double> z0,
                                   std::span<double> zp0) const {
  z0[0] = p_.x0;
  z0[1] = p_.v0;
  zp0[0] = p_.v0 + mu(u0);
  zp0[1] = net_force(z0, u0) / p_.mass;
}

void OscillatorMass::residual(double /*t*/, std::span<const double> z, std::span<const double> zp,
                              std::span<const double> u, std::span<double> r) const {
  assert(z.size() == 2 && zp.size() == 2 && r.size() == 2 && u.size() == input_size());
  r[0] = zp[0] - z[1] - mu(u);
  r[1] = p_.mass * zp[1] - net_force(z, u);
}

void OscillatorMass::jacobian(double /*t*/, std::span<const double> z,
                              std::span<const double> /*zp*/, std::span<const double> u, double cj,
                              std::span<double> values) const {
  const auto [cc, dc] = element_slopes(z, u);
  values[0] = cj;                              // ∂F_x/∂x
  values[1] = p_.stiffness + cc;               // ∂F_v/∂x
  values[2] = -1.0;                            // ∂F_x/∂v
  values[3] = cj * p_.mass + p_.damping + dc;  // ∂F_v/∂v
}

void OscillatorMass::outputs(double /*t*/, std::span<const double> z, std::span<const double> u,
                             std::span<double> y) const {
  y[0] = z[0];
  y[1] = z[1];
  if (p_.displacement_input) y[2] = element_force(z, u);
}

void OscillatorMass::feedthrough_jacobian(double /*t*/, std::span<const double> z,
                                          std::span<const double> u,
                                          std::span<double> values) const {
  // Column-major output_size() × input_size(); only the force row depends on x_in, v_in.
  std::fill(values.begin(), values.end(), 0.0);
  if (!p_.displacement_input) return;
  const std::size_t ny = output_size(), k = displacement_offset();
  const auto [cc, dc] = element_slopes(z, u);
  values[k * ny + 2] = -cc;
  values[(k + 1) * ny + 2] = -dc;
}

model::EntryPattern OscillatorMass::output_jacobian_pattern() const {
  model::EntryPattern p;
  p.row = {0, 1};
  p.column = {0, 1};
  if (p_.displacement_input) {
    p.row.insert(p.row.end(), {2, 2});
    p.column.insert(p.column.end(), {0, 1});
  }
  return p;
}

void OscillatorMass::output_jacobian(double /*t*/, std::span<const double> z,
                                     std::span<const double> u, std::span<double> values) const {
  values[0] = 1.0;
  values[1] = 1.0;
  if (p_.displacement_input) {
    const auto [cc, dc] = element_slopes(z, u);
    values[2] = cc;
    values[3] = dc;
  }
}

model::EntryPattern OscillatorMass::input_jacobian_pattern() const {
  model::EntryPattern p;
  for (std::size_t k = 0; k < input_size(); ++k) {
    // μ acts on the position row, every other input on the velocity row
    p.row.push_back(p_.velocity_input && k == velocity_offset() ? 0 : 1);
    p.column.push_back(k);
  }
  return p;
}

void OscillatorMass::input_jacobian(double /*t*/, std::span<const double> z,
                                    std::span<const double> /*zp*/, std::span<const double> u,
                                    std::span<double> values) const {
  std::size_t k = 0;
  if (p_.force_input) values[k++] = -p_.force_sign;     // F_v = m·v' − (… + s·f)
  if (p_.velocity_input) values[k++] = -p_.force_sign;  // F_x = x' − v − s·μ
  if (p_.displacement_input) {
    // F_v = m·v' + … + F(x − x̃, v − ṽ): ∂F_v/∂x̃ = −∂F/∂Δx (−c_c for the linear element)
    const auto [cc, dc] = element_slopes(z, u);
    values[k++] = -cc;
    values[k] = -dc;
  }
}

// ---- the registry entry ----

namespace {

const ParameterBinding<OscillatorMassParameters>& oscillator_mass_binding() {
  using P = OscillatorMassParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("mass", &P::mass, Bound::kPositive, false, "kg", "mass m")
        .number("c", &P::stiffness, Bound::kNonNegative, false, "N/m", "ground spring c")
        .number("d", &P::damping, Bound::kNonNegative, false, "N s/m", "ground damper d")
        .boolean("force_input", &P::force_input, "the body takes a force input")
        .number("force_sign", &P::force_sign, Bound::kAny, false, "",
                "+1 or -1: the side of the cut element the body is on")
        .boolean("displacement_input", &P::displacement_input,
                 "the body holds a coupling element driven by displacement inputs")
        .boolean("velocity_input", &P::velocity_input,
                 "the body takes a joint's projection multiplier")
        .number("coupling_c", &P::coupling_stiffness, Bound::kNonNegative, false, "N/m",
                "stiffness of the held coupling element")
        .number("coupling_d", &P::coupling_damping, Bound::kNonNegative, false, "N s/m",
                "damping of the held coupling element")
        .number("coupling_C", &P::coupling_cubic_stiffness, Bound::kNonNegative, false, "N/m^3",
                "cubic stiffness of the held coupling element")
        .number("coupling_D", &P::coupling_cubic_damping, Bound::kNonNegative, false, "N s^3/m^3",
                "cubic damping of the held coupling element")
        .number("x0", &P::x0, Bound::kAny, false, "m", "initial position")
        .number("v0", &P::v0, Bound::kAny, false, "m/s", "initial velocity");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const OscillatorMassParameters& p) {
  return {"oscillator_mass", oscillator_mass_binding().to_values(p)};
}

ModelEntry detail::oscillator_mass_entry() {
  ModelEntry e;
  e.name = "oscillator_mass";
  e.summary = "one body on a ground spring and damper, force- or displacement-driven";
  e.parameters = oscillator_mass_binding().specs();
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    const double sign = v.number("force_sign");
    if (sign != 1.0 && sign != -1.0) {
      return ParameterProblem{"force_sign", fmt::format("must be 1 or -1 (got {})", sign)};
    }
    if (!v.boolean("force_input") && !v.boolean("displacement_input")) {
      return ParameterProblem{
          "", "an oscillator_mass needs force_input = true or displacement_input = true"};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<OscillatorMass>(oscillator_mass_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues& v) {
    return std::string(v.boolean("displacement_input") ? "oscillator mass, displacement-driven"
                                                       : "oscillator mass, force-driven");
  };
  return e;
}

}  // namespace macrostep::library
