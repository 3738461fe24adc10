// PI/PID controller with back-calculation anti-windup (seed 003 §2.5: a control subsystem).
#include "macrostep/library/pid_controller.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

void check_parameters(const PidParameters& p) {
  if (!std::isfinite(p.kp) || !std::isfinite(p.ki) || !std::isfinite(p.kd)) {
    throw std::invalid_argument("PidController: gains must be finite");
  }
  if (p.kd != 0.0 && !(p.derivative_filter_time > 0.0 && std::isfinite(p.derivative_filter_time))) {
    throw std::invalid_argument("PidController: kd != 0 needs a derivative filter time > 0");
  }
  if (!(p.tracking_time > 0.0)) {
    throw std::invalid_argument("PidController: tracking time must be > 0 (inf: no anti-windup)");
  }
  if (!(p.output_min <= p.output_max)) {
    throw std::invalid_argument("PidController: output_min must be <= output_max");
  }
  if (!(p.output_lag >= 0.0) || !std::isfinite(p.output_lag)) {
    throw std::invalid_argument("PidController: output lag must be finite and >= 0");
  }
  if (!std::isfinite(p.setpoint) || !std::isfinite(p.integral0) ||
      !std::isfinite(p.derivative_filter0) || !std::isfinite(p.command0)) {
    throw std::invalid_argument("PidController: setpoint and initial state must be finite");
  }
}

}  // namespace

PidController::PidController(const PidParameters& parameters) : parameters_(parameters) {
  check_parameters(parameters_);
  if (has_filter()) filter_index_ = states_++;
  if (has_lag()) lag_index_ = states_++;
  roles_.assign(states_, model::StateRole::kOther);
  // Column q: rows F_q (q', anti-windup), F_c (sat(v)). Column w: rows F_q, F_w, F_c.
  // Column c: row F_c. Structural: the entries exist whether or not the output saturates.
  pattern_.n = states_;
  pattern_.column_start.assign(1, 0);
  const auto push_column = [this](std::vector<std::size_t> rows) {
    for (std::size_t r : rows) pattern_.row_index.push_back(static_cast<std::int64_t>(r));
    pattern_.column_start.push_back(static_cast<std::int64_t>(pattern_.row_index.size()));
  };
  std::vector<std::size_t> q_rows{0};
  if (has_lag()) q_rows.push_back(lag_index_);
  push_column(q_rows);
  if (has_filter()) {
    std::vector<std::size_t> w_rows{0, filter_index_};
    if (has_lag()) w_rows.push_back(lag_index_);
    push_column(w_rows);
  }
  if (has_lag()) push_column({lag_index_});
}

bool PidController::has_feedthrough() const {
  return !has_lag() && (parameters_.kp != 0.0 || parameters_.kd != 0.0);
}

std::string PidController::state_name(std::size_t i) const {
  if (i >= states_) throw std::out_of_range("PidController::state_name: out of range");
  if (i == 0) return "integral";
  return has_filter() && i == filter_index_ ? "derivative_filter" : "command";
}

std::string PidController::output_name(std::size_t i) const {
  if (i != 0) throw std::out_of_range("PidController::output_name: out of range");
  return "command";
}

std::string PidController::output_unit(std::size_t i) const {
  if (i != 0) throw std::out_of_range("PidController::output_unit: out of range");
  return parameters_.unit;
}

std::string PidController::state_unit(std::size_t i) const {
  if (i >= states_) throw std::out_of_range("PidController::state_unit: out of range");
  return has_filter() && i == filter_index_ ? std::string() : parameters_.unit;
}

std::string PidController::state_description(std::size_t i) const {
  if (i >= states_) throw std::out_of_range("PidController::state_description: out of range");
  if (i == 0) return "integral part of the command (with anti-windup)";
  return has_filter() && i == filter_index_ ? "filtered control error (derivative filter)"
                                            : "command after the actuator lag";
}

std::string PidController::output_description(std::size_t i) const {
  if (i != 0) throw std::out_of_range("PidController::output_description: out of range");
  return "controller command (within the output limits)";
}

std::string PidController::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("PidController::input_name: out of range");
  return i == 0 ? "measured" : "setpoint";
}

double PidController::error(std::span<const double> u) const {
  const double setpoint = parameters_.setpoint_input ? u[1] : parameters_.setpoint;
  return setpoint - u[0];
}

double PidController::unlimited_command(std::span<const double> z,
                                        std::span<const double> u) const {
  const double e = error(u);
  double v = parameters_.kp * e + z[0];
  if (has_filter())
    v += parameters_.kd * (e - z[filter_index_]) / parameters_.derivative_filter_time;
  return v;
}

double PidController::saturate(double v) const {
  return std::min(std::max(v, parameters_.output_min), parameters_.output_max);
}

double PidController::windup_correction(double v) const {
  if (std::isinf(parameters_.tracking_time)) return 0.0;
  return (saturate(v) - v) / parameters_.tracking_time;
}

void PidController::initial_state(std::span<const double> u0, std::span<double> z0,
                                  std::span<double> zp0) const {
  assert(z0.size() == states_ && zp0.size() == states_ && u0.size() >= input_size());
  z0[0] = parameters_.integral0;
  if (has_filter()) z0[filter_index_] = parameters_.derivative_filter0;
  if (has_lag()) z0[lag_index_] = parameters_.command0;
  const double e = error(u0);
  const double v = unlimited_command(z0, u0);
  zp0[0] = parameters_.ki * e + windup_correction(v);
  if (has_filter()) {
    zp0[filter_index_] = (e - z0[filter_index_]) / parameters_.derivative_filter_time;
  }
  if (has_lag()) zp0[lag_index_] = (saturate(v) - z0[lag_index_]) / parameters_.output_lag;
}

void PidController::residual(double /*t*/, std::span<const double> z, std::span<const double> zp,
                             std::span<const double> u, std::span<double> r) const {
  assert(z.size() == states_ && zp.size() == states_ && r.size() == states_);
  const double e = error(u);
  const double v = unlimited_command(z, u);
  r[0] = zp[0] - parameters_.ki * e - windup_correction(v);
  if (has_filter()) {
    const std::size_t w = filter_index_;
    r[w] = parameters_.derivative_filter_time * zp[w] - (e - z[w]);
  }
  if (has_lag()) {
    const std::size_t c = lag_index_;
    r[c] = parameters_.output_lag * zp[c] - (saturate(v) - z[c]);
  }
}

void PidController::jacobian(double /*t*/, std::span<const double> z,
                             std::span<const double> /*zp*/, std::span<const double> u, double cj,
                             std::span<double> values) const {
  assert(z.size() == states_ && values.size() == pattern_.nonzeros());
  const auto& p = parameters_;
  const double v = unlimited_command(z, u);
  const double sat_slope = (v >= p.output_min && v <= p.output_max) ? 1.0 : 0.0;
  // ∂(windup correction)/∂v.
  const double dwindup = std::isinf(p.tracking_time) ? 0.0 : (sat_slope - 1.0) / p.tracking_time;
  const double dv_dw = has_filter() ? -p.kd / p.derivative_filter_time : 0.0;
  double* out = values.data();
  // Column q (∂v/∂q = 1).
  *out++ = cj - dwindup;
  if (has_lag()) *out++ = -sat_slope;
  if (has_filter()) {
    *out++ = -dwindup * dv_dw;
    *out++ = cj * p.derivative_filter_time + 1.0;
    if (has_lag()) *out++ = -sat_slope * dv_dw;
  }
  if (has_lag()) *out++ = cj * p.output_lag + 1.0;
  assert(out == values.data() + values.size());
}

void PidController::outputs(double /*t*/, std::span<const double> z, std::span<const double> u,
                            std::span<double> y) const {
  assert(z.size() == states_ && y.size() == 1);
  y[0] = has_lag() ? z[lag_index_] : saturate(unlimited_command(z, u));
}

namespace {

const ParameterBinding<PidParameters>& pid_binding() {
  using P = PidParameters;
  static const auto binding = [] {
    ParameterBinding<P> b;
    b.number("kp", &P::kp, Bound::kAny, false, "", "proportional gain")
        .number("ki", &P::ki, Bound::kAny, false, "1/s", "integral gain")
        .number("kd", &P::kd, Bound::kAny, false, "s", "derivative gain")
        .number("derivative_filter_time", &P::derivative_filter_time, Bound::kPositive, false, "s",
                "derivative filter time T_f (> 0 if kd != 0)")
        .number("tracking_time", &P::tracking_time, Bound::kPositive, false, "s",
                "anti-windup tracking time (default: none)")
        .number("output_min", &P::output_min, Bound::kAny, false, "",
                "lower output limit (default: none)")
        .number("output_max", &P::output_max, Bound::kAny, false, "",
                "upper output limit (default: none)")
        .number("output_lag", &P::output_lag, Bound::kNonNegative, false, "s",
                "output lag T_a (0: algebraic output, direct feed-through)")
        .boolean("setpoint_input", &P::setpoint_input, "the setpoint is the input setpoint")
        .number("setpoint", &P::setpoint, Bound::kAny, false, "",
                "constant setpoint r (setpoint_input = false)")
        .number("integral0", &P::integral0, Bound::kAny, false, "", "initial integral state")
        .number("derivative_filter0", &P::derivative_filter0, Bound::kAny, false, "",
                "initial derivative filter state")
        .number("command0", &P::command0, Bound::kAny, false, "", "initial command")
        .string("unit", &P::unit, "the unit of the command, as the results show it");
    return b;
  }();
  return binding;
}

}  // namespace

RegisteredModel model_of(const PidParameters& p) {
  return {"pid", pid_binding().to_values(p)};
}

ModelEntry detail::pid_entry() {
  ModelEntry e;
  e.name = "pid";
  e.summary = "PI/PID controller with derivative filter, limits, anti-windup and output lag";
  e.parameters = pid_binding().specs();
  e.unfed_hints = {{"setpoint", " (a constant setpoint: setpoint_input = false, setpoint = r)"}};
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    if (v.number("output_min") > v.number("output_max")) {
      return ParameterProblem{"output_max",
                              fmt::format("must be >= output_min = {}", v.number("output_min"))};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<PidController>(pid_binding().to_struct(v));
  };
  e.describe = [](const ParameterValues&) { return std::string("PID controller"); };
  return e;
}

}  // namespace macrostep::library
