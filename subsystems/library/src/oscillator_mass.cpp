// One body of the two-mass oscillator family (oscillator_mass.hpp; METHODS.md §1.2, seed 000
// Eq. 2.5-2.8).
#include "macrostep/library/oscillator_mass.hpp"

#include <cassert>
#include <cmath>
#include <stdexcept>

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

std::string OscillatorMass::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("OscillatorMass::input_name: out of range");
  if (p_.force_input && i == 0) return "force";
  if (p_.velocity_input && i == velocity_offset()) return "mu";
  return i == displacement_offset() ? "x_in" : "v_in";
}

double OscillatorMass::element_force(std::span<const double> z, std::span<const double> u) const {
  if (!p_.displacement_input) return 0.0;
  const std::size_t k = displacement_offset();
  return p_.coupling_stiffness * (z[0] - u[k]) + p_.coupling_damping * (z[1] - u[k + 1]);
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

void OscillatorMass::jacobian(double /*t*/, std::span<const double> /*z*/,
                              std::span<const double> /*zp*/, std::span<const double> /*u*/,
                              double cj, std::span<double> values) const {
  const double cc = p_.displacement_input ? p_.coupling_stiffness : 0.0;
  const double dc = p_.displacement_input ? p_.coupling_damping : 0.0;
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

void OscillatorMass::feedthrough_jacobian(double /*t*/, std::span<const double> /*z*/,
                                          std::span<const double> /*u*/,
                                          std::span<double> values) const {
  // Column-major output_size() × input_size(); only the force row depends on x_in, v_in.
  std::fill(values.begin(), values.end(), 0.0);
  if (!p_.displacement_input) return;
  const std::size_t ny = output_size(), k = displacement_offset();
  values[k * ny + 2] = -p_.coupling_stiffness;
  values[(k + 1) * ny + 2] = -p_.coupling_damping;
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

void OscillatorMass::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                     std::span<const double> /*u*/,
                                     std::span<double> values) const {
  values[0] = 1.0;
  values[1] = 1.0;
  if (p_.displacement_input) {
    values[2] = p_.coupling_stiffness;
    values[3] = p_.coupling_damping;
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

void OscillatorMass::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                                    std::span<const double> /*zp*/, std::span<const double> /*u*/,
                                    std::span<double> values) const {
  std::size_t k = 0;
  if (p_.force_input) values[k++] = -p_.force_sign;     // F_v = m·v' − (… + s·f)
  if (p_.velocity_input) values[k++] = -p_.force_sign;  // F_x = x' − v − s·μ
  if (p_.displacement_input) {
    values[k++] = -p_.coupling_stiffness;  // −(−F), F = c_c(x − x̃) + …: ∂F_v/∂x̃ = −c_c
    values[k] = -p_.coupling_damping;
  }
}

}  // namespace macrostep::library
