// A user's model as a plugin (subsystems/plugin/.../plugin_api.hpp): a Duffing
// oscillator, one body on a cubic spring with harmonic forcing and one force input,
//
//   x' = v,   m v' = -d v - k x - k3 x^3 + a sin(w t) + s force(t),
//
// outputs (x, v), so that two of them couple through a spring_damper connection, whose
// variable is the tension λ: the body on its left takes +λ (s = 1), the one on its right −λ
// (s = -1), as the built-in models do. Parameters (JSON object; all optional): mass, damping,
// stiffness, cubic, amplitude, omega, x0, v0, force_sign (s, 1 or -1).
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "macrostep/plugin/plugin_api.hpp"

namespace {

using macrostep::model::SparsityPattern;
using macrostep::model::StateRole;

class DuffingOscillator final : public macrostep::model::Subsystem {
 public:
  explicit DuffingOscillator(const std::string& parameters_json) {
    const auto p = nlohmann::json::parse(parameters_json);
    std::map<std::string, double*> keys = {
        {"mass", &m_},   {"damping", &d_},   {"stiffness", &k_},
        {"cubic", &k3_}, {"amplitude", &a_}, {"omega", &w_},
        {"x0", &x0_},    {"v0", &v0_},       {"force_sign", &s_}};
    for (const auto& [key, value] : p.items()) {
      const auto it = keys.find(key);
      if (it == keys.end()) {
        throw std::invalid_argument("unknown parameter \"" + key +
                                    "\" (allowed: mass, damping, stiffness, cubic, amplitude, "
                                    "omega, x0, v0, force_sign)");
      }
      if (!value.is_number()) throw std::invalid_argument("\"" + key + "\" must be a number");
      *it->second = value.get<double>();
    }
    if (!(m_ > 0.0) || !std::isfinite(m_)) throw std::invalid_argument("\"mass\" must be > 0");
    if (s_ != 1.0 && s_ != -1.0) throw std::invalid_argument("\"force_sign\" must be 1 or -1");
    pattern_.n = 2;
    pattern_.column_start = {0, 2, 4};
    pattern_.row_index = {0, 1, 0, 1};
  }

  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 2; }
  std::span<const StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  std::string output_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  // Optional: the units the results record (metadata, compare, plot), and from which the
  // spring_damper connection's tension is "N".
  std::string output_unit(std::size_t i) const override { return i == 0 ? "m" : "m/s"; }
  // Optional: one line each that the results carry beside the unit.
  std::string output_description(std::size_t i) const override {
    return i == 0 ? "displacement of the Duffing mass" : "velocity of the Duffing mass";
  }
  std::string state_description(std::size_t i) const override { return output_description(i); }
  std::string input_name(std::size_t) const override { return "force"; }
  double initial_time() const override { return 0.0; }

  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    z0[0] = x0_;
    z0[1] = v0_;
    zp0[0] = v0_;
    zp0[1] = acceleration(0.0, x0_, v0_, u0[0]);
  }

  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = m_ * (zp[1] - acceleration(t, z[0], z[1], u[0]));
  }

  const SparsityPattern& jacobian_pattern() const override { return pattern_; }

  void jacobian(double, std::span<const double> z, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;                            // dF0/dx
    values[1] = k_ + 3.0 * k3_ * z[0] * z[0];  // dF1/dx
    values[2] = -1.0;                          // dF0/dv
    values[3] = d_ + cj * m_;                  // dF1/dv
  }

  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
    y[1] = z[1];
  }

#ifndef DUFFING_WITHOUT_COUPLING_JACOBIANS
  // The coupling Jacobians (model/subsystem.hpp). ∂y/∂z says that the outputs are the states
  // x and v themselves, which is how the co-simulation's error estimators find the positions
  // and velocities they watch (a model without it is watched through its coupling variables
  // only); ∂F/∂u is the force's place in the residual.
  macrostep::model::EntryPattern output_jacobian_pattern() const override {
    return {{0, 1}, {0, 1}};
  }
  void output_jacobian(double, std::span<const double>, std::span<const double>,
                       std::span<double> values) const override {
    values[0] = values[1] = 1.0;
  }
  macrostep::model::EntryPattern input_jacobian_pattern() const override {
    return {{1}, {0}};
  }
  void input_jacobian(double, std::span<const double>, std::span<const double>,
                      std::span<const double>, std::span<double> values) const override {
    values[0] = -s_;  // F1 = m v' + ... - s force
  }

#endif

  // The force acts on the body both outputs describe (the sap Jacobian, METHODS §4.5).
  bool input_acceleration(std::span<double> accel, std::span<StateRole> roles) const override {
    accel[0] = accel[1] = s_ / m_;
    roles[0] = StateRole::kPosition;
    roles[1] = StateRole::kVelocity;
    return true;
  }

 private:
  double acceleration(double t, double x, double v, double force) const {
    return (-d_ * v - k_ * x - k3_ * x * x * x + a_ * std::sin(w_ * t) + s_ * force) / m_;
  }

  double m_ = 1.0, d_ = 0.0, k_ = 1.0, k3_ = 0.0, a_ = 0.0, w_ = 0.0, x0_ = 0.0, v0_ = 0.0;
  double s_ = 1.0;
  SparsityPattern pattern_;
  static constexpr StateRole roles_[2] = {StateRole::kPosition, StateRole::kVelocity};
};

}  // namespace

MACROSTEP_PLUGIN(DuffingOscillator)
