// The belt drive with a tensioner idler (belt_drive.hpp).
#include "macrostep/library/belt_drive.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>

#include <memory>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

using Row = std::array<double, 6>;

void check_parameters(const BeltDriveParameters& p) {
  const auto positive = [](double v, const char* what) {
    if (!(v > 0.0) || !std::isfinite(v)) {
      throw std::invalid_argument(std::string("BeltDrive: ") + what + " must be > 0");
    }
  };
  const auto non_negative = [](double v, const char* what) {
    if (!(v >= 0.0) || !std::isfinite(v)) {
      throw std::invalid_argument(std::string("BeltDrive: ") + what + " must be >= 0");
    }
  };
  positive(p.driver_inertia, "driver_inertia");
  positive(p.driven_inertia, "driven_inertia");
  positive(p.driver_radius, "driver_radius");
  positive(p.driven_radius, "driven_radius");
  positive(p.span_stiffness, "span_stiffness");
  non_negative(p.span_damping, "span_damping");
  non_negative(p.pretension, "pretension");
  positive(p.idler_mass, "idler_mass");
  positive(p.idler_factor, "idler_factor");
  non_negative(p.idler_damping, "idler_damping");
  non_negative(p.bearing_damping[0], "bearing_damping");
  non_negative(p.bearing_damping[1], "bearing_damping");
}

// Column j has its kinematic row (2·(j/2)) and the three dynamic rows 1, 3, 5.
model::SparsityPattern belt_pattern() {
  model::SparsityPattern pattern;
  pattern.n = 6;
  pattern.column_start.assign(1, 0);
  for (std::int64_t j = 0; j < 6; ++j) {
    const std::int64_t kinematic = 2 * (j / 2);
    for (std::int64_t row = 0; row < 6; ++row) {
      if (row == kinematic || row % 2 == 1) pattern.row_index.push_back(row);
    }
    pattern.column_start.push_back(static_cast<std::int64_t>(pattern.row_index.size()));
  }
  return pattern;
}

}  // namespace

BeltDrive::BeltDrive(const BeltDriveParameters& parameters) : p_(parameters) {
  check_parameters(p_);
  for (std::size_t i = 0; i < 6; ++i) {
    roles_[i] = i % 2 == 0 ? model::StateRole::kPosition : model::StateRole::kVelocity;
  }
  pattern_ = belt_pattern();
}

std::size_t BeltDrive::input_size() const {
  return (p_.left_coupled ? 1u : 0u) + (p_.right_coupled ? 1u : 0u) + 1u;
}

std::string BeltDrive::state_name(std::size_t i) const {
  static const char* const kNames[] = {"phi_1",   "omega_1", "phi_2",
                                       "omega_2", "x_idler", "v_idler"};
  if (i >= 6) throw std::out_of_range("BeltDrive::state_name: out of range");
  return kNames[i];
}

std::string BeltDrive::output_name(std::size_t i) const {
  if (i < 6) return state_name(i);
  if (i == kTightTension) return "tension_tight";
  if (i == kSlackTension) return "tension_slack";
  throw std::out_of_range("BeltDrive::output_name: out of range");
}

std::string BeltDrive::output_unit(std::size_t i) const {
  static const char* const kUnits[] = {"rad", "rad/s", "rad", "rad/s", "m", "m/s", "N", "N"};
  if (i >= 8) throw std::out_of_range("BeltDrive::output_unit: out of range");
  return kUnits[i];
}

std::string BeltDrive::state_unit(std::size_t i) const {
  if (i >= 6) throw std::out_of_range("BeltDrive::state_unit: out of range");
  return output_unit(i);
}

std::string BeltDrive::state_description(std::size_t i) const {
  if (i >= 6) throw std::out_of_range("BeltDrive::state_description: out of range");
  return output_description(i);
}

std::string BeltDrive::output_description(std::size_t i) const {
  static const char* const kText[] = {"angle of the driver pulley",
                                      "angular velocity of the driver pulley",
                                      "angle of the driven pulley",
                                      "angular velocity of the driven pulley",
                                      "travel of the idler into the slack span",
                                      "velocity of the idler",
                                      "tension of the tight span",
                                      "tension of the slack span"};
  if (i >= 8) throw std::out_of_range("BeltDrive::output_description: out of range");
  return kText[i];
}

std::string BeltDrive::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("BeltDrive::input_name: out of range");
  if (p_.left_coupled && i == 0) return "tau_left";
  if (p_.right_coupled && i == (p_.left_coupled ? 1u : 0u)) return "tau_right";
  return "idler_force";
}

bool BeltDrive::input_is_effort(std::size_t i) const {
  // Every input is an effort (torques and the idler force).
  return i < input_size();
}

std::array<double, 3> BeltDrive::inputs(std::span<const double> u) const {
  assert(u.size() >= input_size());
  std::size_t k = 0;
  const double left = p_.left_coupled ? u[k++] : 0.0;
  const double right = p_.right_coupled ? u[k++] : 0.0;
  return {left, right, u[k]};
}

std::array<double, 2> BeltDrive::tensions(std::span<const double> z) const {
  assert(z.size() == 6);
  const double c = p_.span_stiffness, d = p_.span_damping, k = p_.idler_factor;
  const double e0 = p_.pretension / c;
  const double s = p_.driver_radius * z[0] - p_.driven_radius * z[2];
  const double s_rate = p_.driver_radius * z[1] - p_.driven_radius * z[3];
  return {c * (e0 + s) + d * s_rate, c * (e0 - s + k * z[4]) + d * (-s_rate + k * z[5])};
}

std::array<double, 3> BeltDrive::loads(std::span<const double> z, std::span<const double> u) const {
  const auto [tight, slack] = tensions(z);
  const auto [tau_left, tau_right, idler_force] = inputs(u);
  return {p_.driver_radius * (slack - tight) - p_.bearing_damping[0] * z[1] - tau_left,
          p_.driven_radius * (tight - slack) - p_.bearing_damping[1] * z[3] + tau_right,
          -p_.idler_factor * slack - p_.idler_damping * z[5] - idler_force};
}

void BeltDrive::initial_state(std::span<const double> u0, std::span<double> z0,
                              std::span<double> zp0) const {
  assert(z0.size() == 6 && zp0.size() == 6);
  z0[0] = 0.0;
  z0[1] = p_.speed0[0];
  z0[2] = 0.0;
  z0[3] = p_.speed0[1];
  z0[4] = 0.0;
  z0[5] = 0.0;
  const auto f = loads(z0, u0);
  zp0[0] = z0[1];
  zp0[1] = f[0] / p_.driver_inertia;
  zp0[2] = z0[3];
  zp0[3] = f[1] / p_.driven_inertia;
  zp0[4] = z0[5];
  zp0[5] = f[2] / p_.idler_mass;
}

void BeltDrive::residual(double /*t*/, std::span<const double> z, std::span<const double> zp,
                         std::span<const double> u, std::span<double> r) const {
  assert(z.size() == 6 && zp.size() == 6 && r.size() == 6);
  const auto f = loads(z, u);
  r[0] = zp[0] - z[1];
  r[1] = p_.driver_inertia * zp[1] - f[0];
  r[2] = zp[2] - z[3];
  r[3] = p_.driven_inertia * zp[3] - f[1];
  r[4] = zp[4] - z[5];
  r[5] = p_.idler_mass * zp[5] - f[2];
}

std::array<std::array<double, 6>, 6> BeltDrive::dense_jacobian(double cj) const {
  const double c = p_.span_stiffness, d = p_.span_damping, k = p_.idler_factor;
  const double r1 = p_.driver_radius, r2 = p_.driven_radius;
  // Gradients of the tensions with respect to z.
  const Row tight{c * r1, d * r1, -c * r2, -d * r2, 0.0, 0.0};
  const Row slack{-c * r1, -d * r1, c * r2, d * r2, c * k, d * k};
  std::array<Row, 6> m{};
  for (std::size_t j = 0; j < 6; ++j) {
    m[1][j] = -r1 * (slack[j] - tight[j]);
    m[3][j] = -r2 * (tight[j] - slack[j]);
    m[5][j] = k * slack[j];
  }
  m[1][1] += p_.bearing_damping[0] + cj * p_.driver_inertia;
  m[3][3] += p_.bearing_damping[1] + cj * p_.driven_inertia;
  m[5][5] += p_.idler_damping + cj * p_.idler_mass;
  for (std::size_t row = 0; row < 6; row += 2) {
    m[row][row] = cj;
    m[row][row + 1] = -1.0;
  }
  return m;
}

void BeltDrive::jacobian(double /*t*/, std::span<const double> /*z*/,
                         std::span<const double> /*zp*/, std::span<const double> /*u*/, double cj,
                         std::span<double> values) const {
  assert(values.size() == pattern_.nonzeros());
  const auto m = dense_jacobian(cj);
  std::size_t k = 0;
  for (std::size_t j = 0; j < 6; ++j) {
    for (auto e = pattern_.column_start[j]; e < pattern_.column_start[j + 1]; ++e) {
      values[k++] = m[static_cast<std::size_t>(pattern_.row_index[static_cast<std::size_t>(e)])][j];
    }
  }
}

void BeltDrive::outputs(double /*t*/, std::span<const double> z, std::span<const double> /*u*/,
                        std::span<double> y) const {
  assert(z.size() == 6 && y.size() == 8);
  for (std::size_t i = 0; i < 6; ++i) y[i] = z[i];
  const auto [tight, slack] = tensions(z);
  y[kTightTension] = tight;
  y[kSlackTension] = slack;
}

model::EntryPattern BeltDrive::output_jacobian_pattern() const {
  model::EntryPattern pattern;
  for (std::size_t i = 0; i < 6; ++i) {
    pattern.row.push_back(i);
    pattern.column.push_back(i);
  }
  for (std::size_t j = 0; j < 4; ++j) {  // T_t depends on the pulleys
    pattern.row.push_back(kTightTension);
    pattern.column.push_back(j);
  }
  for (std::size_t j = 0; j < 6; ++j) {  // T_s also on the idler
    pattern.row.push_back(kSlackTension);
    pattern.column.push_back(j);
  }
  return pattern;
}

void BeltDrive::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                std::span<const double> /*u*/, std::span<double> values) const {
  assert(values.size() == 16);
  const double c = p_.span_stiffness, d = p_.span_damping, k = p_.idler_factor;
  const double r1 = p_.driver_radius, r2 = p_.driven_radius;
  const double entries[] = {1.0,     1.0,     1.0,     1.0,     1.0,   1.0,     // states
                            c * r1,  d * r1,  -c * r2, -d * r2,                 // T_t
                            -c * r1, -d * r1, c * r2,  d * r2,  c * k, d * k};  // T_s
  std::copy(std::begin(entries), std::end(entries), values.begin());
}

model::EntryPattern BeltDrive::input_jacobian_pattern() const {
  // R_1 = J_1·ω_1' − (... − τ_left), R_3 = J_2·ω_2' − (... + τ_right), R_5 = m·v' − (... − F).
  model::EntryPattern pattern;
  std::size_t input = 0;
  if (p_.left_coupled) {
    pattern.row.push_back(1);
    pattern.column.push_back(input++);
  }
  if (p_.right_coupled) {
    pattern.row.push_back(3);
    pattern.column.push_back(input++);
  }
  pattern.row.push_back(5);
  pattern.column.push_back(input);
  return pattern;
}

void BeltDrive::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                               std::span<const double> /*zp*/, std::span<const double> /*u*/,
                               std::span<double> values) const {
  assert(values.size() == input_size());
  std::size_t k = 0;
  if (p_.left_coupled) values[k++] = 1.0;
  if (p_.right_coupled) values[k++] = -1.0;
  values[k] = 1.0;
}

// ---- the registry entry ----

namespace {

const ParameterBinding<BeltDriveParameters>& belt_drive_binding() {
  using P = BeltDriveParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("driver_inertia", &P::driver_inertia, Bound::kPositive, true, "kg m^2",
             "driver pulley and hub inertia J_1")
        .number("driven_inertia", &P::driven_inertia, Bound::kPositive, true, "kg m^2",
                "driven pulley and hub inertia J_2")
        .number("driver_radius", &P::driver_radius, Bound::kPositive, true, "m",
                "driver pulley radius r_1")
        .number("driven_radius", &P::driven_radius, Bound::kPositive, true, "m",
                "driven pulley radius r_2")
        .number("span_stiffness", &P::span_stiffness, Bound::kPositive, true, "N/m",
                "stiffness c_b of each span")
        .number("span_damping", &P::span_damping, Bound::kNonNegative, false, "N s/m",
                "damping d_b of each span")
        .number("pretension", &P::pretension, Bound::kNonNegative, false, "N", "pretension T_0")
        .number("idler_mass", &P::idler_mass, Bound::kPositive, true, "kg",
                "idler pulley mass m_i (arm reduced to it)")
        .number("idler_factor", &P::idler_factor, Bound::kPositive, false, "",
                "slack-span length per idler travel k_g")
        .number("idler_damping", &P::idler_damping, Bound::kNonNegative, false, "N s/m",
                "idler guide friction b_i")
        .numbers("bearing_damping", &P::bearing_damping, Bound::kNonNegative,
                 "pulley [driver, driven]", "N m s/rad", "bearing damping b_1, b_2")
        .numbers("speed0", &P::speed0, Bound::kAny, "pulley [driver, driven]", "rad/s",
                 "initial pulley speeds")
        .boolean("left_coupled", &P::left_coupled, "the driver pulley takes tau_left")
        .boolean("right_coupled", &P::right_coupled, "the driven pulley takes tau_right");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const BeltDriveParameters& p) {
  return {"belt_drive", belt_drive_binding().to_values(p)};
}

ModelEntry detail::belt_drive_entry() {
  ModelEntry e;
  e.name = "belt_drive";
  e.summary = "two pulleys on a belt with a tensioner idler";
  e.parameters = belt_drive_binding().specs();
  e.unfed_hints = {{"tau_left", " (a free driver pulley: left_coupled = false)"},
                   {"tau_right", " (a free driven pulley: right_coupled = false)"}};
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<BeltDrive>(belt_drive_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues&) {
    return std::string("belt drive with tensioner idler");
  };
  return e;
}

}  // namespace macrostep::library
