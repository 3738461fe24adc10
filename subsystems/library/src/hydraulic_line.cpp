// The hydraulic line with its own chamber (seed 003 §2.4 line element, §2.3.2 analogue).
#include "macrostep/library/hydraulic_line.hpp"

#include <cassert>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "builtin_models.hpp"

namespace macrostep::library {

HydraulicLine::HydraulicLine(const HydraulicLineParameters& parameters) : parameters_(parameters) {
  const auto& p = parameters_;
  const bool finite = std::isfinite(p.density) && std::isfinite(p.length) &&
                      std::isfinite(p.area) && std::isfinite(p.chamber_volume) &&
                      std::isfinite(p.chamber_modulus) && std::isfinite(p.chamber_pressure) &&
                      std::isfinite(p.volume0) && std::isfinite(p.flow0) &&
                      std::isfinite(p.volume_nominal) && std::isfinite(p.flow_nominal);
  if (!finite || !(p.density > 0.0) || !(p.length > 0.0) || !(p.area > 0.0) ||
      !(p.chamber_volume > 0.0) || !(p.chamber_modulus > 0.0) || p.volume_nominal < 0.0 ||
      p.flow_nominal < 0.0) {
    throw std::invalid_argument(
        "HydraulicLine: need density, length, area, chamber volume and modulus > 0, nominals "
        ">= 0, all finite");
  }
  inertance_ = p.density * p.length / p.area;
  stiffness_ = p.chamber_modulus / p.chamber_volume;
  constexpr double kBar = 1e5;  // Pa
  const double volume =
      p.volume_nominal > 0.0 ? p.volume_nominal : p.chamber_volume * kBar / p.chamber_modulus;
  const double flow =
      p.flow_nominal > 0.0 ? p.flow_nominal : volume * std::sqrt(stiffness_ / inertance_);
  if (!model::valid_nominal(volume) || !model::valid_nominal(flow)) {
    throw std::invalid_argument(
        "HydraulicLine: the derived nominals of volume and flow are not finite and > 0 (give "
        "volume_nominal and flow_nominal)");
  }
  nominals_ = {volume, flow};
  // Column V: rows F_V, F_Q; column Q: rows F_V, F_Q.
  pattern_.n = 2;
  pattern_.column_start = {0, 2, 4};
  pattern_.row_index = {0, 1, 0, 1};
}

double HydraulicLine::chamber_pressure(double volume) const {
  return parameters_.chamber_pressure - stiffness_ * (volume - parameters_.volume0);
}

std::string HydraulicLine::state_name(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicLine::state_name: out of range");
  return output_name(i);
}

std::string HydraulicLine::output_name(std::size_t i) const {
  static const char* const kNames[] = {"volume", "flow", "chamber_pressure"};
  if (i >= 3) throw std::out_of_range("HydraulicLine::output_name: out of range");
  return kNames[i];
}

std::string HydraulicLine::output_unit(std::size_t i) const {
  static const char* const kUnits[] = {"m^3", "m^3/s", "Pa"};
  if (i >= 3) throw std::out_of_range("HydraulicLine::output_unit: out of range");
  return kUnits[i];
}

std::string HydraulicLine::state_unit(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicLine::state_unit: out of range");
  return output_unit(i);
}

std::string HydraulicLine::state_description(std::size_t i) const {
  if (i >= 2) throw std::out_of_range("HydraulicLine::state_description: out of range");
  return output_description(i);
}

std::string HydraulicLine::output_description(std::size_t i) const {
  static const char* const kText[] = {"volume delivered into the node",
                                      "flow through the line into the node",
                                      "pressure of the line's own chamber"};
  if (i >= 3) throw std::out_of_range("HydraulicLine::output_description: out of range");
  return kText[i];
}

std::string HydraulicLine::input_name(std::size_t i) const {
  if (i >= 1) throw std::out_of_range("HydraulicLine::input_name: out of range");
  return "pressure";
}

void HydraulicLine::initial_state(std::span<const double> u0, std::span<double> z0,
                                  std::span<double> zp0) const {
  assert(z0.size() == 2 && zp0.size() == 2 && u0.size() >= 1);
  z0[0] = parameters_.volume0;
  z0[1] = parameters_.flow0;
  zp0[0] = parameters_.flow0;
  zp0[1] = (chamber_pressure(parameters_.volume0) - u0[0]) / inertance_;
}

void HydraulicLine::residual(double /*t*/, std::span<const double> z, std::span<const double> zp,
                             std::span<const double> u, std::span<double> r) const {
  assert(z.size() == 2 && zp.size() == 2 && r.size() == 2 && u.size() >= 1);
  r[0] = zp[0] - z[1];
  r[1] = inertance_ * zp[1] - (chamber_pressure(z[0]) - u[0]);
}

void HydraulicLine::jacobian(double /*t*/, std::span<const double> z,
                             std::span<const double> /*zp*/, std::span<const double> /*u*/,
                             double cj, std::span<double> values) const {
  assert(z.size() == 2 && values.size() == 4);
  (void)z;
  values[0] = cj;               // ∂F_V/∂V + cj·∂F_V/∂V'
  values[1] = stiffness_;       // ∂F_Q/∂V (p_C falls as V grows)
  values[2] = -1.0;             // ∂F_V/∂Q
  values[3] = cj * inertance_;  // cj·∂F_Q/∂Q'
}

void HydraulicLine::outputs(double /*t*/, std::span<const double> z, std::span<const double> /*u*/,
                            std::span<double> y) const {
  assert(z.size() == 2 && y.size() == 3);
  y[kVolume] = z[0];
  y[kFlow] = z[1];
  y[kChamberPressure] = chamber_pressure(z[0]);
}

model::EntryPattern HydraulicLine::output_jacobian_pattern() const {
  return {{kVolume, kFlow, kChamberPressure}, {0, 1, 0}};
}

void HydraulicLine::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                    std::span<const double> /*u*/, std::span<double> values) const {
  assert(values.size() == 3);
  values[0] = values[1] = 1.0;
  values[2] = -stiffness_;
}

model::EntryPattern HydraulicLine::input_jacobian_pattern() const {
  return {{1}, {0}};
}

void HydraulicLine::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                                   std::span<const double> /*zp*/, std::span<const double> /*u*/,
                                   std::span<double> values) const {
  assert(values.size() == 1);
  values[0] = 1.0;  // F_Q = I·Q' − p_C + p
}

namespace {

const ParameterBinding<HydraulicLineParameters>& line_binding() {
  using P = HydraulicLineParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("density", &P::density, Bound::kPositive, false, "kg/m^3", "fluid density rho")
        .number("length", &P::length, Bound::kPositive, true, "m", "line length L")
        .number("area", &P::area, Bound::kPositive, true, "m^2", "line cross-section A")
        .number("chamber_volume", &P::chamber_volume, Bound::kPositive, true, "m^3",
                "volume V_C of the line's own chamber")
        .number("chamber_modulus", &P::chamber_modulus, Bound::kPositive, true, "Pa",
                "bulk modulus E_C of the chamber's fluid (stiffness E_C/V_C)")
        .number("chamber_pressure", &P::chamber_pressure, Bound::kAny, false, "Pa",
                "chamber pressure p_C0 at the initial volume")
        .number("volume0", &P::volume0, Bound::kAny, false, "m^3",
                "initial volume delivered into the node")
        .number("flow0", &P::flow0, Bound::kAny, false, "m^3/s", "initial flow into the node")
        .number("volume_nominal", &P::volume_nominal, Bound::kNonNegative, false, "m^3",
                "size of the volume for the macro-step controller's atol (0: V_C*1bar/E_C)")
        .number("flow_nominal", &P::flow_nominal, Bound::kNonNegative, false, "m^3/s",
                "size of the flow for the controller's atol (0: volume_nominal*sqrt(k/I))");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const HydraulicLineParameters& p) {
  return {"hydraulic_line", line_binding().to_values(p)};
}

ModelEntry detail::hydraulic_line_entry() {
  ModelEntry e;
  e.name = "hydraulic_line";
  e.summary = "hydraulic line (inertance rho*L/A) from a compliant chamber of its own to a node";
  e.parameters = line_binding().specs();
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<HydraulicLine>(line_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues&) { return std::string("hydraulic line"); };
  return e;
}

}  // namespace macrostep::library
