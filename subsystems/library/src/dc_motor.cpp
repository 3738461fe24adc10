// The DC motor behind a gearbox (dc_motor.hpp).
#include "macrostep/library/dc_motor.hpp"

#include <cassert>
#include <cmath>
#include <stdexcept>

#include <memory>
#include <optional>
#include <string>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

void check(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("DC motor: ") + what);
}

// z = [i, φ, ω].
constexpr std::size_t kI = 0, kPhi = 1, kOmega = 2;

}  // namespace

DcMotor::DcMotor(const DcMotorParameters& parameters) : p_(parameters) {
  check(std::isfinite(p_.resistance) && p_.resistance > 0.0, "resistance must be > 0");
  check(std::isfinite(p_.inductance) && p_.inductance > 0.0, "inductance must be > 0");
  check(std::isfinite(p_.torque_constant) && p_.torque_constant > 0.0,
        "torque_constant must be > 0");
  check(std::isfinite(p_.inertia) && p_.inertia > 0.0, "inertia must be > 0");
  check(std::isfinite(p_.damping) && p_.damping >= 0.0, "damping must be >= 0");
  check(std::isfinite(p_.gear_ratio) && p_.gear_ratio >= 1.0, "gear_ratio must be >= 1");
  check(std::isfinite(p_.current0) && std::isfinite(p_.angle0) && std::isfinite(p_.speed0),
        "initial values must be finite");
  roles_ = {model::StateRole::kOther, model::StateRole::kPosition, model::StateRole::kVelocity};
  // CSC of ∂F/∂z + cj ∂F/∂z': column i: rows F_i, F_ω; column φ: F_φ; column ω: F_i, F_φ, F_ω.
  pattern_.n = 3;
  pattern_.column_start = {0, 2, 3, 6};
  pattern_.row_index = {0, 2, 1, 0, 1, 2};
}

std::string DcMotor::state_name(std::size_t i) const {
  // The rotor's angle and speed are n times the outputs' (gearbox side): their own names, since a
  // state and an output of one name are one quantity (result columns, compare, unit derivation).
  static const char* const names[] = {"current", "phi_rotor", "omega_rotor"};
  if (i >= 3) throw std::out_of_range("DcMotor::state_name: out of range");
  return names[i];
}

std::string DcMotor::output_name(std::size_t i) const {
  static const char* const names[] = {"phi", "omega", "current"};
  if (i >= 3) throw std::out_of_range("DcMotor::output_name: out of range");
  return names[i];
}

std::string DcMotor::output_unit(std::size_t i) const {
  static const char* const units[] = {"rad", "rad/s", "A"};
  if (i >= 3) throw std::out_of_range("DcMotor::output_unit: out of range");
  return units[i];
}

std::string DcMotor::state_unit(std::size_t i) const {
  static const char* const units[] = {"A", "rad", "rad/s"};
  if (i >= 3) throw std::out_of_range("DcMotor::state_unit: out of range");
  return units[i];
}

std::string DcMotor::state_description(std::size_t i) const {
  static const char* const text[] = {"armature current", "rotor angle", "rotor angular velocity"};
  if (i >= 3) throw std::out_of_range("DcMotor::state_description: out of range");
  return text[i];
}

std::string DcMotor::output_description(std::size_t i) const {
  static const char* const text[] = {"angle at the gearbox output",
                                     "angular velocity at the gearbox output", "armature current"};
  if (i >= 3) throw std::out_of_range("DcMotor::output_description: out of range");
  return text[i];
}

std::string DcMotor::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("DcMotor::input_name: out of range");
  return i == 0 ? "voltage" : "tau_right";
}

bool DcMotor::input_is_effort(std::size_t i) const {
  // The load torque on the shaft; the voltage is a signal.
  return i == 1 && i < input_size();
}

void DcMotor::initial_state(std::span<const double> u0, std::span<double> z0,
                            std::span<double> zp0) const {
  const double n = p_.gear_ratio, k = p_.torque_constant;
  z0[kI] = p_.current0;
  z0[kPhi] = n * p_.angle0;
  z0[kOmega] = n * p_.speed0;
  zp0[kI] = (u0[0] - p_.resistance * z0[kI] - k * z0[kOmega]) / p_.inductance;
  zp0[kPhi] = z0[kOmega];
  zp0[kOmega] = (k * z0[kI] - p_.damping * z0[kOmega] + load_torque(u0) / n) / p_.inertia;
}

void DcMotor::residual(double /*t*/, std::span<const double> z, std::span<const double> zp,
                       std::span<const double> u, std::span<double> r) const {
  assert(z.size() == 3 && zp.size() == 3 && r.size() == 3 && u.size() == input_size());
  const double k = p_.torque_constant;
  r[kI] = p_.inductance * zp[kI] - (u[0] - p_.resistance * z[kI] - k * z[kOmega]);
  r[kPhi] = zp[kPhi] - z[kOmega];
  r[kOmega] = p_.inertia * zp[kOmega] -
              (k * z[kI] - p_.damping * z[kOmega] + load_torque(u) / p_.gear_ratio);
}

void DcMotor::jacobian(double /*t*/, std::span<const double> /*z*/, std::span<const double> /*zp*/,
                       std::span<const double> /*u*/, double cj, std::span<double> values) const {
  const double k = p_.torque_constant;
  values[0] = cj * p_.inductance + p_.resistance;  // ∂F_i/∂i
  values[1] = -k;                                  // ∂F_ω/∂i
  values[2] = cj;                                  // ∂F_φ/∂φ
  values[3] = k;                                   // ∂F_i/∂ω
  values[4] = -1.0;                                // ∂F_φ/∂ω
  values[5] = cj * p_.inertia + p_.damping;        // ∂F_ω/∂ω
}

void DcMotor::outputs(double /*t*/, std::span<const double> z, std::span<const double> /*u*/,
                      std::span<double> y) const {
  y[0] = z[kPhi] / p_.gear_ratio;
  y[1] = z[kOmega] / p_.gear_ratio;
  y[2] = z[kI];
}

model::EntryPattern DcMotor::output_jacobian_pattern() const {
  model::EntryPattern p;
  p.row = {0, 1, 2};
  p.column = {kPhi, kOmega, kI};
  return p;
}

void DcMotor::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                              std::span<const double> /*u*/, std::span<double> values) const {
  values[0] = 1.0 / p_.gear_ratio;
  values[1] = 1.0 / p_.gear_ratio;
  values[2] = 1.0;
}

model::EntryPattern DcMotor::input_jacobian_pattern() const {
  model::EntryPattern p;
  p.row = {kI};
  p.column = {0};
  if (p_.right_coupled) {
    p.row.push_back(kOmega);
    p.column.push_back(1);
  }
  return p;
}

void DcMotor::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                             std::span<const double> /*zp*/, std::span<const double> /*u*/,
                             std::span<double> values) const {
  values[0] = -1.0;                                        // ∂F_i/∂V
  if (p_.right_coupled) values[1] = -1.0 / p_.gear_ratio;  // ∂F_ω/∂τ
}

// ---- the registry entry ----

namespace {

const ParameterBinding<DcMotorParameters>& dc_motor_binding() {
  using P = DcMotorParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("resistance", &P::resistance, Bound::kPositive, false, "Ohm", "armature resistance R")
        .number("inductance", &P::inductance, Bound::kPositive, false, "H", "armature inductance L")
        .number("torque_constant", &P::torque_constant, Bound::kPositive, false, "N m/A",
                "torque constant k (= back-EMF constant, V s/rad)")
        .number("inertia", &P::inertia, Bound::kPositive, false, "kg m^2", "rotor inertia J")
        .number("damping", &P::damping, Bound::kNonNegative, false, "N m s/rad",
                "rotor bearing damping b")
        .number("gear_ratio", &P::gear_ratio, Bound::kAny, false, "",
                "gearbox ratio n >= 1 (rotor turns per output turn)")
        .number("current0", &P::current0, Bound::kAny, false, "A", "initial current")
        .number("angle0", &P::angle0, Bound::kAny, false, "rad", "initial output angle")
        .number("speed0", &P::speed0, Bound::kAny, false, "rad/s", "initial output speed")
        .boolean("right_coupled", &P::right_coupled, "the output shaft takes tau_right");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const DcMotorParameters& p) {
  return {"dc_motor", dc_motor_binding().to_values(p)};
}

ModelEntry detail::dc_motor_entry() {
  ModelEntry e;
  e.name = "dc_motor";
  e.summary = "DC motor: armature circuit, rotor, back-EMF and gearbox";
  e.parameters = dc_motor_binding().specs();
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    const double n = v.number("gear_ratio");
    if (!(n >= 1.0) || !std::isfinite(n)) {
      return ParameterProblem{"gear_ratio",
                              "must be a number >= 1 (rotor turns per output turn; got {got})"};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<DcMotor>(dc_motor_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues& v) {
    const double n = v.number("gear_ratio");
    return n == 1.0 ? std::string("DC motor")
                    : "DC motor with a gearbox " + std::to_string(n) + ":1";
  };
  return e;
}

}  // namespace macrostep::library
