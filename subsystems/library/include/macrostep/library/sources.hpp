// Sources and blocks: built-in subsystems without continuous states, y = g(t, u), run by the
// integrator without IDA (its time is the whole workspace).
//
// Sources have no inputs: y = f(t), evaluated at macro points like any output. A consumer sees
// a source through its coupling polynomial, built from the values at past macro points, so a
// change between two macro points (a smooth step between T_N and T_{N+1}) reaches it only once
// T_{N+1} is accepted and sampled: during [T_N, T_{N+1}] the consumer still extrapolates the
// old values, and the error estimators, which compare polynomials of the past as well, notice
// the change only after it. A jump (a step of width 0) is a time event instead
// (model/events.hpp): the macro step ends on it, and the polynomials restart after it
// (docs/design/methods.md §3.3).
//
// Blocks (gain, sum) have inputs and direct feed-through, affine in u with an exact D = ∂y/∂u:
// the master's consistent update solves them with the subsystems they feed.
//
// Every model has a `unit` parameter: the unit of its outputs, reported by output_unit().
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/model/events.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

// A subsystem without continuous states: no residual, an empty Jacobian, no initial state.
class StatelessSubsystem : public model::Subsystem {
 public:
  explicit StatelessSubsystem(std::string unit) : unit_(std::move(unit)) {}
  std::size_t state_size() const final { return 0; }
  std::span<const model::StateRole> state_roles() const final { return {}; }
  std::string state_name(std::size_t i) const final;
  double initial_time() const final { return 0.0; }
  void initial_state(std::span<const double>, std::span<double>, std::span<double>) const final {}
  void residual(double, std::span<const double>, std::span<const double>, std::span<const double>,
                std::span<double>) const final {}
  const model::SparsityPattern& jacobian_pattern() const final { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double, std::span<double>) const final {}
  std::string output_unit(std::size_t i) const override;

 private:
  std::string unit_;
  model::SparsityPattern pattern_{0, {0}, {}};
};

// A source of one output "y" = value(t), without inputs.
class TimeSource : public StatelessSubsystem {
 public:
  using StatelessSubsystem::StatelessSubsystem;
  std::size_t input_size() const final { return 0; }
  std::size_t output_size() const final { return 1; }
  std::string output_name(std::size_t i) const final;
  std::string input_name(std::size_t i) const final;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const final;
  virtual double value(double t) const = 0;
  // The source's law with its parameters ("step from 0 to 10 at t = 0.5 s").
  std::string output_description(std::size_t i) const final;
  virtual std::string law() const = 0;
};

// y = value.
class ConstantSource final : public TimeSource {
 public:
  ConstantSource(double value, std::string unit);
  double value(double t) const override;
  std::string law() const override;

 private:
  double value_;
};

// y = initial for t < time, final for t >= time + width, and between them the C1 cubic
// initial + (final − initial)·(3s² − 2s³), s = (t − time)/width. Width 0: a jump at `time`,
// a time event (events(): two modes, y = initial before it and final from it on), which the
// co-simulation's macro steps and the monolithic run end on.
class StepSource final : public TimeSource {
 public:
  StepSource(double initial, double final_value, double time, double width, std::string unit);
  double value(double t) const override;
  std::string law() const override;
  const model::Events* events() const override { return events_.get(); }

 private:
  double initial_, final_, time_, width_;
  std::unique_ptr<const model::Events> events_;  // width 0 only
};

// y = offset for t < start_time, offset + slope·(min(t, end_time) − start_time) after: a ramp
// that holds its value from end_time on (end_time = +inf: never).
class RampSource final : public TimeSource {
 public:
  RampSource(double start_time, double slope, double offset, double end_time, std::string unit);
  double value(double t) const override;
  std::string law() const override;

 private:
  double start_, slope_, offset_, end_;
};

// y = offset + amplitude·sin(omega·t + phase).
class SineSource final : public TimeSource {
 public:
  SineSource(double amplitude, double omega, double phase, double offset, std::string unit);
  double value(double t) const override;
  std::string law() const override;

 private:
  double amplitude_, omega_, phase_, offset_;
};

// y = k·u: input "u", output "y".
class Gain final : public StatelessSubsystem {
 public:
  Gain(double k, std::string unit);
  std::string output_description(std::size_t i) const override;
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 1; }
  bool has_feedthrough() const override { return true; }
  bool outputs_affine_in_inputs() const override { return true; }
  std::string output_name(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;
  void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> values) const override;

 private:
  double k_;
};

// y = Σ s_i·u_i over inputs "u_1" … "u_n" (n = signs.size() >= 1), output "y". The fixed order
// of the sum makes it reproducible bit for bit.
class Sum final : public StatelessSubsystem {
 public:
  Sum(std::vector<double> signs, std::string unit);
  // "u_1 - u_2", "2·u_1 + 0.5·u_2".
  std::string output_description(std::size_t i) const override;
  std::size_t input_size() const override { return signs_.size(); }
  std::size_t output_size() const override { return 1; }
  bool has_feedthrough() const override { return true; }
  bool outputs_affine_in_inputs() const override { return true; }
  std::string output_name(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;
  void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> values) const override;

 private:
  std::vector<double> signs_;
};

}  // namespace macrostep::library
