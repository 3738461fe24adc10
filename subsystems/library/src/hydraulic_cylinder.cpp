// The hydraulic cylinder coupled through volume nodes (seed 003 §2.4, Eq. 2.88-2.90).
#include "macrostep/library/hydraulic_cylinder.hpp"

#include <cassert>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "builtin_models.hpp"

namespace macrostep::library {

HydraulicCylinder::HydraulicCylinder(const HydraulicCylinderParameters& parameters)
    : parameters_(parameters) {
  const auto& p = parameters_;
  if (!(p.mass > 0.0) || !(p.area_a > 0.0) || !(p.area_b > 0.0) || !(p.viscous_friction >= 0.0) ||
      !(p.coulomb_friction >= 0.0) || !(p.coulomb_speed > 0.0) || !std::isfinite(p.x0) ||
      !std::isfinite(p.v0)) {
    throw std::invalid_argument(
        "HydraulicCylinder: need mass, areas, coulomb speed > 0, friction >= 0, finite x0, v0");
  }
  // Column x: row F_x only (the force does not depend on x); column v: rows F_x, F_v.
  pattern_.n = 2;
  pattern_.column_start = {0, 1, 3};
  pattern_.row_index = {0, 0, 1};
}

std::string HydraulicCylinder::state_name(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicCylinder::state_name: out of range");
  return i == 0 ? "x" : "v";
}

std::string HydraulicCylinder::output_name(std::size_t i) const {
  static const char* const kNames[] = {"x", "v", "volume_a", "flow_a", "volume_b", "flow_b"};
  if (i >= 6) throw std::out_of_range("HydraulicCylinder::output_name: out of range");
  return kNames[i];
}

std::string HydraulicCylinder::output_unit(std::size_t i) const {
  static const char* const kUnits[] = {"m", "m/s", "m^3", "m^3/s", "m^3", "m^3/s"};
  if (i >= 6) throw std::out_of_range("HydraulicCylinder::output_unit: out of range");
  return kUnits[i];
}

std::string HydraulicCylinder::state_unit(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicCylinder::state_unit: out of range");
  return output_unit(i);
}

std::string HydraulicCylinder::state_description(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicCylinder::state_description: out of range");
  return output_description(i);
}

std::string HydraulicCylinder::output_description(std::size_t i) const {
  static const char* const kText[] = {
      "piston position (grows as chamber a fills)", "piston velocity",
      "volume drawn from node a since the start",   "flow into node a",
      "volume pushed into node b since the start",  "flow into node b"};
  if (i >= 6) throw std::out_of_range("HydraulicCylinder::output_description: out of range");
  return kText[i];
}

std::string HydraulicCylinder::input_name(std::size_t i) const {
  static const char* const kNames[] = {"pressure_a", "pressure_b", "rod_force"};
  if (i >= input_size()) throw std::out_of_range("HydraulicCylinder::input_name: out of range");
  return kNames[i];
}

bool HydraulicCylinder::input_is_effort(std::size_t i) const {
  // The rod force; the chamber pressures are potentials, not flows into a node.
  return i == 2 && i < input_size();
}

double HydraulicCylinder::net_force(double v, std::span<const double> u) const {
  const auto& p = parameters_;
  double f = p.area_a * u[0] - p.area_b * u[1] - p.viscous_friction * v;
  if (p.coulomb_friction != 0.0) f -= p.coulomb_friction * std::tanh(v / p.coulomb_speed);
  if (p.rod_coupled) f += u[2];
  return f;
}

void HydraulicCylinder::initial_state(std::span<const double> u0, std::span<double> z0,
                                      std::span<double> zp0) const {
  assert(z0.size() == 2 && zp0.size() == 2 && u0.size() >= input_size());
  z0[0] = parameters_.x0;
  z0[1] = parameters_.v0;
  zp0[0] = parameters_.v0;
  zp0[1] = net_force(parameters_.v0, u0) / parameters_.mass;
}

void HydraulicCylinder::residual(double /*t*/, std::span<const double> z,
                                 std::span<const double> zp, std::span<const double> u,
                                 std::span<double> r) const {
  assert(z.size() == 2 && zp.size() == 2 && r.size() == 2 && u.size() >= input_size());
  r[0] = zp[0] - z[1];
  r[1] = parameters_.mass * zp[1] - net_force(z[1], u);
}

void HydraulicCylinder::jacobian(double /*t*/, std::span<const double> z,
                                 std::span<const double> /*zp*/, std::span<const double> /*u*/,
                                 double cj, std::span<double> values) const {
  assert(z.size() == 2 && values.size() == 3);
  const auto& p = parameters_;
  double dforce_dv = -p.viscous_friction;
  if (p.coulomb_friction != 0.0) {
    const double th = std::tanh(z[1] / p.coulomb_speed);
    dforce_dv -= p.coulomb_friction * (1.0 - th * th) / p.coulomb_speed;
  }
  values[0] = cj;                       // ∂F_x/∂x + cj·∂F_x/∂x'
  values[1] = -1.0;                     // ∂F_x/∂v
  values[2] = cj * p.mass - dforce_dv;  // ∂F_v/∂v + cj·∂F_v/∂v'
}

void HydraulicCylinder::outputs(double /*t*/, std::span<const double> z,
                                std::span<const double> /*u*/, std::span<double> y) const {
  assert(z.size() == 2 && y.size() == 6);
  const auto& p = parameters_;
  const double stroke = z[0] - p.x0;
  y[kPosition] = z[0];
  y[kSpeed] = z[1];
  y[kVolumeA] = -p.area_a * stroke;
  y[kFlowA] = -p.area_a * z[1];
  y[kVolumeB] = p.area_b * stroke;
  y[kFlowB] = p.area_b * z[1];
}

model::EntryPattern HydraulicCylinder::output_jacobian_pattern() const {
  return {{kPosition, kSpeed, kVolumeA, kFlowA, kVolumeB, kFlowB}, {0, 1, 0, 1, 0, 1}};
}

void HydraulicCylinder::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                        std::span<const double> /*u*/,
                                        std::span<double> values) const {
  assert(values.size() == 6);
  const auto& p = parameters_;
  values[0] = values[1] = 1.0;
  values[2] = values[3] = -p.area_a;
  values[4] = values[5] = p.area_b;
}

model::EntryPattern HydraulicCylinder::input_jacobian_pattern() const {
  if (parameters_.rod_coupled) return {{1, 1, 1}, {0, 1, 2}};
  return {{1, 1}, {0, 1}};
}

void HydraulicCylinder::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                                       std::span<const double> /*zp*/,
                                       std::span<const double> /*u*/,
                                       std::span<double> values) const {
  assert(values.size() == input_size());
  values[0] = -parameters_.area_a;  // F_v = m v' − (A_a p_a − A_b p_b − ... + F_rod)
  values[1] = parameters_.area_b;
  if (parameters_.rod_coupled) values[2] = -1.0;
}

namespace {

const ParameterBinding<HydraulicCylinderParameters>& cylinder_binding() {
  using P = HydraulicCylinderParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("mass", &P::mass, Bound::kPositive, true, "kg", "piston and rod mass m")
        .number("area_a", &P::area_a, Bound::kPositive, true, "m^2", "piston area of chamber A")
        .number("area_b", &P::area_b, Bound::kPositive, true, "m^2", "annulus area of chamber B")
        .number("viscous_friction", &P::viscous_friction, Bound::kNonNegative, false, "N*s/m",
                "viscous friction d")
        .number("coulomb_friction", &P::coulomb_friction, Bound::kNonNegative, false, "N",
                "Coulomb friction force F_c")
        .number("coulomb_speed", &P::coulomb_speed, Bound::kPositive, false, "m/s",
                "speed v_c of the smoothed Coulomb friction")
        .number("x0", &P::x0, Bound::kAny, false, "m", "initial rod position")
        .number("v0", &P::v0, Bound::kAny, false, "m/s", "initial rod speed")
        .boolean("rod_coupled", &P::rod_coupled, "the rod takes the input rod_force");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const HydraulicCylinderParameters& p) {
  return {"hydraulic_cylinder", cylinder_binding().to_values(p)};
}

ModelEntry detail::hydraulic_cylinder_entry() {
  ModelEntry e;
  e.name = "hydraulic_cylinder";
  e.summary = "double-acting cylinder: piston with two chambers, friction and a rod";
  e.parameters = cylinder_binding().specs();
  e.unfed_hints = {{"rod_force", " (a free rod: rod_coupled = false)"}};
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<HydraulicCylinder>(cylinder_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues&) { return std::string("hydraulic cylinder"); };
  return e;
}

}  // namespace macrostep::library
