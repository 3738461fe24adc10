// A coupled system that is not a chain (METHODS.md §1.1: any subsystems, any laws u = φ(y)):
// three free bodies joined by one coupling law, a massless node with a spring/damper (k, d) to
// each body. The node sits at the bodies' mean position and velocity, so the law reads the
// outputs of all three subsystems and writes one force per body:
//   F_i = k (x̄ − x_i) + d (v̄ − v_i),  x̄ = (x_1 + x_2 + x_3)/3,  v̄ likewise;  Σ F_i = 0.
// With equal masses the relative motion r_i = x_i − x̄ is a damped oscillator m r̈ = −k r − d ṙ
// and x̄ moves uniformly: an exact solution to compare with.
#pragma once

#include <array>
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/model/subsystem.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::testing {

// One free body driven by one input force: ẋ = v, m v̇ = F. States and outputs [x, v].
class FreeBody final : public model::Subsystem {
 public:
  FreeBody(std::string name, double mass, double x0, double v0)
      : name_(std::move(name)), mass_(mass), x0_(x0), v0_(v0) {
    pattern_.n = 2;
    pattern_.column_start = {0, 1, 3};
    pattern_.row_index = {0, 0, 1};
  }
  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 2; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return name_ + (i == 0 ? ".x" : ".v"); }
  std::string output_name(std::size_t i) const override { return state_name(i); }
  std::string input_name(std::size_t) const override { return name_ + ".F"; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    z0[0] = x0_;
    z0[1] = v0_;
    zp0[0] = v0_;
    zp0[1] = u0[0] / mass_;
  }
  void residual(double, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = mass_ * zp[1] - u[0];
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;          // ∂r0/∂x
    values[1] = -1.0;        // ∂r0/∂v
    values[2] = cj * mass_;  // ∂r1/∂v
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
    y[1] = z[1];
  }
  // sap (METHODS §4.5): the input force accelerates the body by 1/m.
  bool input_acceleration(std::span<double> accel,
                          std::span<model::StateRole> roles) const override {
    accel[0] = accel[1] = 1.0 / mass_;
    roles[0] = model::StateRole::kPosition;
    roles[1] = model::StateRole::kVelocity;
    return true;
  }

 private:
  std::string name_;
  double mass_, x0_, v0_;
  model::SparsityPattern pattern_;
  std::array<model::StateRole, 2> roles_{model::StateRole::kPosition, model::StateRole::kVelocity};
};

// The node law of the file comment. Reads [x_1, v_1, x_2, v_2, x_3, v_3], writes F_1, F_2, F_3.
class NodeLaw final : public system::CouplingLaw {
 public:
  NodeLaw(double k, double d) : k_(k), d_(d) {
    for (std::size_t i = 0; i < 3; ++i) {
      reads_[2 * i] = {i, 0};
      reads_[2 * i + 1] = {i, 1};
    }
  }
  std::span<const system::OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override { return names_; }
  void evaluate(std::span<const double> y, std::span<double> u) const override {
    if (y.size() != 6 || u.size() != 3) throw std::invalid_argument("NodeLaw: sizes");
    const double x_mean = (y[0] + y[2] + y[4]) / 3.0, v_mean = (y[1] + y[3] + y[5]) / 3.0;
    for (std::size_t i = 0; i < 3; ++i) {
      u[i] = k_ * (x_mean - y[2 * i]) + d_ * (v_mean - y[2 * i + 1]);
    }
  }
  void jacobian(std::span<const double>, std::span<double> dphi_dy) const override {
    if (dphi_dy.size() != 18) throw std::invalid_argument("NodeLaw: sizes");
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 3; ++j) {
        const double share = 1.0 / 3.0 - (i == j ? 1.0 : 0.0);
        dphi_dy[6 * i + 2 * j] = k_ * share;
        dphi_dy[6 * i + 2 * j + 1] = d_ * share;
      }
    }
  }
  bool has_feedthrough() const override { return false; }

 private:
  double k_, d_;
  std::array<system::OutputRef, 6> reads_{};
  std::array<std::string, 3> names_{"F_1", "F_2", "F_3"};
};

struct Star {
  double mass = 1.0, k = 100.0, d = 0.5;
  std::array<double, 3> x0{0.1, -0.05, 0.02}, v0{0.3, 0.0, -0.6};
};

// Subsystem i is body i+1 ("body1" ...), input of body i = F_{i+1}; monitors x and v of each.
inline system::CoupledSystem make_star_system(const Star& s) {
  std::vector<std::unique_ptr<model::Subsystem>> bodies;
  std::vector<system::MonitoredOutput> monitored;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string name = "body" + std::to_string(i + 1);
    bodies.push_back(std::make_unique<FreeBody>(name, s.mass, s.x0[i], s.v0[i]));
    monitored.push_back({name + ".x", {i, 0}, control::WeightGroup::kPosition});
    monitored.push_back({name + ".v", {i, 1}, control::WeightGroup::kVelocity});
  }
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<NodeLaw>(s.k, s.d));
  return system::CoupledSystem(std::move(bodies), std::move(laws), {{0}, {1}, {2}},
                               std::move(monitored));
}

// Exact position and velocity of body i at t (equal masses; underdamped relative motion).
inline std::array<double, 2> star_exact(const Star& s, std::size_t i, double t) {
  const double x_mean0 = (s.x0[0] + s.x0[1] + s.x0[2]) / 3.0;
  const double v_mean = (s.v0[0] + s.v0[1] + s.v0[2]) / 3.0;
  const double w0 = std::sqrt(s.k / s.mass), zeta = s.d / (2.0 * std::sqrt(s.k * s.mass));
  const double wd = w0 * std::sqrt(1.0 - zeta * zeta), sigma = zeta * w0;
  const double r0 = s.x0[i] - x_mean0, rp0 = s.v0[i] - v_mean;
  const double a = r0, b = (rp0 + sigma * r0) / wd, e = std::exp(-sigma * t);
  const double c = std::cos(wd * t), sn = std::sin(wd * t);
  const double r = e * (a * c + b * sn);
  const double rp = e * ((b * wd - sigma * a) * c - (a * wd + sigma * b) * sn);
  return {x_mean0 + v_mean * t + r, v_mean + rp};
}

}  // namespace macrostep::testing
