// The torsional drive-train segment (seed 003 §2.6, rotational mechanics; the chain segment's
// structure, MODELS.md §1.1, with free or coupled ends, bearing damping and load torques).
#include "macrostep/library/drive_train.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace macrostep::library {

namespace {

void check_parameters(const DriveTrainParameters& p) {
  const std::size_t n = p.inertia.size();
  if (n == 0) throw std::invalid_argument("DriveTrainSegment: needs at least one inertia");
  if (p.shaft.size() != n - 1 || p.angle0.size() != n || p.speed0.size() != n ||
      (!p.bearing_damping.empty() && p.bearing_damping.size() != n) ||
      (!p.load.empty() && p.load.size() != n)) {
    throw std::invalid_argument(
        "DriveTrainSegment: need n inertias, n - 1 shafts, n initial angles and speeds, and "
        "bearing damping and loads either empty or of size n");
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!(p.inertia[k] > 0.0)) throw std::invalid_argument("DriveTrainSegment: inertia <= 0");
    if (!p.bearing_damping.empty() && !(p.bearing_damping[k] >= 0.0)) {
      throw std::invalid_argument("DriveTrainSegment: negative bearing damping");
    }
    if (!p.load.empty() && !(p.load[k].step_width > 0.0)) {
      throw std::invalid_argument("DriveTrainSegment: load step width must be > 0");
    }
  }
}

// Banded pattern of n bodies with states [q_k, w_k] interleaved: columns q_j and w_j have rows
// F_w,j−1 (j > 0), F_q,j, F_w,j, F_w,j+1 (j < n−1).
model::SparsityPattern banded_pattern(std::size_t n) {
  model::SparsityPattern pattern;
  pattern.n = 2 * n;
  pattern.column_start.assign(1, 0);
  for (std::size_t j = 0; j < n; ++j) {
    const auto r = static_cast<std::int64_t>(2 * j);
    for (int column = 0; column < 2; ++column) {
      if (j > 0) pattern.row_index.push_back(r - 1);
      pattern.row_index.push_back(r);
      pattern.row_index.push_back(r + 1);
      if (j + 1 < n) pattern.row_index.push_back(r + 3);
      pattern.column_start.push_back(static_cast<std::int64_t>(pattern.row_index.size()));
    }
  }
  return pattern;
}

}  // namespace

double LoadTorque::torque(double t) const {
  if (step == 0.0) return constant;
  return constant + step * 0.5 * (1.0 + std::tanh((t - step_time) / step_width));
}

DriveTrainSegment::DriveTrainSegment(const DriveTrainParameters& parameters)
    : left_coupled_(parameters.left_coupled), right_coupled_(parameters.right_coupled) {
  check_parameters(parameters);
  const std::size_t n = parameters.inertia.size();
  inertia_ = parameters.inertia;
  shaft_ = parameters.shaft;
  bearing_damping_ = parameters.bearing_damping;
  if (bearing_damping_.empty()) bearing_damping_.assign(n, 0.0);
  load_ = parameters.load;
  if (load_.empty()) load_.assign(n, LoadTorque{});
  angle0_ = parameters.angle0;
  speed0_ = parameters.speed0;
  roles_.resize(2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    roles_[2 * k] = model::StateRole::kPosition;
    roles_[2 * k + 1] = model::StateRole::kVelocity;
  }
  pattern_ = banded_pattern(n);
}

std::size_t DriveTrainSegment::input_size() const {
  return (left_coupled_ ? 1u : 0u) + (right_coupled_ ? 1u : 0u);
}

std::string DriveTrainSegment::state_name(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("DriveTrainSegment::state_name: out of range");
  return (i % 2 == 0 ? "phi_" : "omega_") + std::to_string(i / 2 + 1);
}

std::string DriveTrainSegment::output_name(std::size_t i) const {
  const std::string last = std::to_string(inertias());
  switch (i) {
    case 0:
      return "phi_1";
    case 1:
      return "phi_" + last;
    case 2:
      return "omega_1";
    case 3:
      return "omega_" + last;
    default:
      throw std::out_of_range("DriveTrainSegment::output_name: out of range");
  }
}

std::string DriveTrainSegment::output_unit(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("DriveTrainSegment::output_unit: out of range");
  return i < 2 ? "rad" : "rad/s";
}

std::string DriveTrainSegment::state_unit(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("DriveTrainSegment::state_unit: out of range");
  return i % 2 == 0 ? "rad" : "rad/s";
}

std::string DriveTrainSegment::state_description(std::size_t i) const {
  if (i >= state_size()) {
    throw std::out_of_range("DriveTrainSegment::state_description: out of range");
  }
  return (i % 2 == 0 ? "angle of inertia " : "angular velocity of inertia ") +
         std::to_string(i / 2 + 1);
}

std::string DriveTrainSegment::output_description(std::size_t i) const {
  if (i >= output_size()) {
    throw std::out_of_range("DriveTrainSegment::output_description: out of range");
  }
  const std::size_t inertia = i % 2 == 0 ? 0 : inertias() - 1;
  return state_description(2 * inertia + (i < 2 ? 0 : 1));
}

std::string DriveTrainSegment::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("DriveTrainSegment::input_name: out of range");
  return left_coupled_ && i == 0 ? "tau_left" : "tau_right";
}

bool DriveTrainSegment::input_is_effort(std::size_t i) const {
  // The end torques.
  return i < input_size();
}

void DriveTrainSegment::net_torques(double t, std::span<const double> z, std::span<const double> u,
                                    std::span<double> torque) const {
  assert(z.size() == state_size() && u.size() >= input_size() && torque.size() == inertias());
  sweep_torques(t, z.data(), u.data(), [&torque](std::size_t k, double tk) { torque[k] = tk; });
}

void DriveTrainSegment::initial_state(std::span<const double> u0, std::span<double> z0,
                                      std::span<double> zp0) const {
  assert(z0.size() == state_size() && zp0.size() == state_size());
  const std::size_t n = inertias();
  for (std::size_t k = 0; k < n; ++k) {
    z0[2 * k] = angle0_[k];
    z0[2 * k + 1] = speed0_[k];
  }
  sweep_torques(initial_time(), z0.data(), u0.data(), [&](std::size_t k, double torque) {
    zp0[2 * k] = z0[2 * k + 1];
    zp0[2 * k + 1] = torque / inertia_[k];
  });
}

void DriveTrainSegment::residual(double t, std::span<const double> z, std::span<const double> zp,
                                 std::span<const double> u, std::span<double> r) const {
  assert(z.size() == state_size() && zp.size() == state_size() && r.size() == state_size() &&
         u.size() >= input_size());
  sweep_torques(t, z.data(), u.data(), [&](std::size_t k, double torque) {
    r[2 * k] = zp[2 * k] - z[2 * k + 1];
    r[2 * k + 1] = inertia_[k] * zp[2 * k + 1] - torque;
  });
}

void DriveTrainSegment::jacobian(double /*t*/, std::span<const double> z,
                                 std::span<const double> /*zp*/, std::span<const double> /*u*/,
                                 double cj, std::span<double> values) const {
  assert(z.size() == state_size() && values.size() == pattern_.nonzeros());
  const std::size_t n = inertias();
  double* p = values.data();
  // Stiffness and damping of the shaft left of inertia j (zero at the segment's ends: an input
  // or nothing acts there).
  double k_prev = 0.0, d_prev = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const bool interior_right = j + 1 < n;
    double k_next = 0.0, d_next = 0.0;
    if (interior_right) {
      k_next = shaft_[j].stiffness(z[2 * j + 2] - z[2 * j]);
      d_next = shaft_[j].damping(z[2 * j + 3] - z[2 * j + 1]);
    }
    // Column φ_j: rows F_ω,j−1 | F_φ,j | F_ω,j | F_ω,j+1.
    if (j > 0) *p++ = -k_prev;
    *p++ = cj;
    *p++ = k_prev + k_next;
    if (interior_right) *p++ = -k_next;
    // Column ω_j.
    if (j > 0) *p++ = -d_prev;
    *p++ = -1.0;
    *p++ = cj * inertia_[j] + d_prev + d_next + bearing_damping_[j];
    if (interior_right) *p++ = -d_next;
    k_prev = k_next;
    d_prev = d_next;
  }
  assert(p == values.data() + values.size());
}

void DriveTrainSegment::outputs(double /*t*/, std::span<const double> z,
                                std::span<const double> /*u*/, std::span<double> y) const {
  assert(z.size() == state_size() && y.size() == 4);
  const std::size_t last = 2 * (inertias() - 1);
  y[0] = z[0];
  y[1] = z[last];
  y[2] = z[1];
  y[3] = z[last + 1];
}

model::EntryPattern DriveTrainSegment::output_jacobian_pattern() const {
  const std::size_t last = 2 * (inertias() - 1);
  return {{0, 1, 2, 3}, {0, last, 1, last + 1}};  // y = [φ_1, φ_n, ω_1, ω_n]
}

void DriveTrainSegment::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                        std::span<const double> /*u*/,
                                        std::span<double> values) const {
  assert(values.size() == 4);
  std::fill(values.begin(), values.end(), 1.0);
}

model::EntryPattern DriveTrainSegment::input_jacobian_pattern() const {
  // F_ω,1 = J ω' − (−τ_left + ...), F_ω,n = J ω' − (... + τ_right).
  model::EntryPattern pattern;
  std::size_t input = 0;
  if (left_coupled_) {
    pattern.row.push_back(1);
    pattern.column.push_back(input++);
  }
  if (right_coupled_) {
    pattern.row.push_back(2 * inertias() - 1);
    pattern.column.push_back(input);
  }
  return pattern;
}

void DriveTrainSegment::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                                       std::span<const double> /*zp*/,
                                       std::span<const double> /*u*/,
                                       std::span<double> values) const {
  assert(values.size() == input_size());
  std::size_t k = 0;
  if (left_coupled_) values[k++] = 1.0;
  if (right_coupled_) values[k] = -1.0;
}

}  // namespace macrostep::library
