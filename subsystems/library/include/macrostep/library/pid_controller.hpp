// A PI/PID controller with output limits and back-calculation anti-windup as a Subsystem: the
// control subsystem of seed 003 §2.5 (Fig. 2.19/2.20), coupled through system::SignalLaw.
//
// Control error e = r − m (m: measured value, an input; r: the setpoint, an input or a constant).
//   v       = K_p·e + q + D                         (unlimited command)
//   command = sat(v) = min(max(v, u_min), u_max)
//   q̇       = K_i·e + (sat(v) − v)/T_t              (integral part with back-calculation: while
//                                                    saturated it is pulled back with time
//                                                    constant T_t instead of winding up)
//   D       = K_d·(e − w)/T_f,  T_f·ẇ = e − w       (derivative of e filtered by 1/(1 + T_f·s),
//                                                    present only if K_d ≠ 0)
//   T_a·ċ   = sat(v) − c                            (optional actuator lag, present if T_a > 0)
// Output y = [command]: with T_a = 0 it is the algebraic sat(v(z, u)), which depends on the
// inputs directly whenever K_p ≠ 0 or K_d ≠ 0 (has_feedthrough(); the master's consistent
// update solves it, METHODS D-1, with ∂y/∂u by finite differences); with T_a > 0 it is the lag
// state c, without feed-through.
// States, in this order: "integral" (q), "derivative_filter" (w, if K_d ≠ 0), "command" (c, if
// T_a > 0); role kOther. Inputs: "measured", then "setpoint" if setpoint_input. Output:
// "command". z0 comes from the parameters only (q0, w0, c0), never from the inputs (the
// CoupledSystem reads initial outputs at zero inputs); pick w0 = the initial error to start
// without a derivative kick.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

struct PidParameters {
  double kp = 0.0, ki = 0.0, kd = 0.0;
  double derivative_filter_time = 0.0;  // T_f > 0 if kd ≠ 0 [s]
  // T_t > 0 [s]; +inf turns the anti-windup off (q integrates K_i·e only).
  double tracking_time = std::numeric_limits<double>::infinity();
  double output_min = -std::numeric_limits<double>::infinity();
  double output_max = std::numeric_limits<double>::infinity();
  double output_lag = 0.0;  // T_a >= 0 [s]; 0: algebraic output
  bool setpoint_input = false;
  double setpoint = 0.0;                                             // r when !setpoint_input
  double integral0 = 0.0, derivative_filter0 = 0.0, command0 = 0.0;  // q0, w0, c0
  std::string unit;  // the unit of the command, as the user declares it ("" if not)
};

class PidController final : public model::Subsystem {
 public:
  // Throws std::invalid_argument for non-finite gains, kd ≠ 0 without T_f > 0, T_t <= 0,
  // output_min > output_max, T_a < 0, or a non-finite initial state.
  explicit PidController(const PidParameters& parameters);

  std::size_t state_size() const override { return states_; }
  std::size_t input_size() const override { return parameters_.setpoint_input ? 2 : 1; }
  std::size_t output_size() const override { return 1; }
  bool has_feedthrough() const override;
  // Without output limits the lag-free command K_p·e + I + K_d·(e − w)/T_f is affine in the
  // inputs; the saturation makes it piecewise affine only (then evaluated, not linearised).
  bool outputs_affine_in_inputs() const override {
    return std::isinf(parameters_.output_min) && std::isinf(parameters_.output_max);
  }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // The declared `unit` (PidParameters::unit); also of the states q and c, which add to the
  // command. The filter state w is in the measured value's unit, which the controller does not
  // know ("").
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  // F_q = q' − K_i·e − (sat(v) − v)/T_t;  F_w = T_f·w' − (e − w);  F_c = T_a·c' − (sat(v) − c).
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  // At a limit (v exactly u_min or u_max) sat is taken as unsaturated (slope 1).
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

  // The control error e and the unlimited command v at (z, u).
  double error(std::span<const double> u) const;
  double unlimited_command(std::span<const double> z, std::span<const double> u) const;
  double saturate(double v) const;

 private:
  bool has_filter() const { return parameters_.kd != 0.0; }
  bool has_lag() const { return parameters_.output_lag > 0.0; }
  // sat(v) − v over T_t (zero without anti-windup).
  double windup_correction(double v) const;

  PidParameters parameters_;
  std::size_t states_ = 1, filter_index_ = 0, lag_index_ = 0;
  std::vector<model::StateRole> roles_;
  model::SparsityPattern pattern_;
};

// The registry description (model = "pid") of `p`.
RegisteredModel model_of(const PidParameters& p);

}  // namespace macrostep::library
