// Sources and blocks without states (sources.hpp) and their registry entries.
#include "macrostep/library/sources.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

void require_finite(std::initializer_list<double> values, const char* what) {
  for (const double v : values) {
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(what) + " must be finite");
  }
}

}  // namespace

std::string StatelessSubsystem::state_name(std::size_t) const {
  throw std::out_of_range("a subsystem without states has no state names");
}

std::string StatelessSubsystem::output_unit(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("output_unit: out of range");
  return unit_;
}

std::string TimeSource::output_name(std::size_t i) const {
  if (i != 0) throw std::out_of_range("source output_name: out of range");
  return "y";
}

std::string TimeSource::input_name(std::size_t) const {
  throw std::out_of_range("a source has no inputs");
}

void TimeSource::outputs(double t, std::span<const double>, std::span<const double>,
                         std::span<double> y) const {
  assert(y.size() == 1);
  y[0] = value(t);
}

ConstantSource::ConstantSource(double value, std::string unit)
    : TimeSource(std::move(unit)), value_(value) {
  require_finite({value}, "constant: value");
}

std::string TimeSource::output_description(std::size_t i) const {
  if (i != 0) throw std::out_of_range("source output_description: out of range");
  return law();
}

double ConstantSource::value(double) const {
  return value_;
}

std::string ConstantSource::law() const {
  return fmt::format("constant {}", value_);
}

namespace {

// A jump's two modes: the level before it (its time event still ahead) and after it.
class StepLevelMode final : public model::Mode {
 public:
  StepLevelMode(const model::Subsystem& level, double next, bool after)
      : level_(level), next_(next), after_(after) {}
  const model::Subsystem& equations() const override { return level_; }
  double next_time_event() const override { return next_; }
  void indicators(double, std::span<const double>, std::span<const double>,
                  std::span<double>) const override {}
  std::vector<std::byte> serialize() const override {
    return {std::byte{static_cast<unsigned char>(after_ ? 1 : 0)}};
  }

 private:
  const model::Subsystem& level_;
  double next_;
  bool after_;
};

class StepEvents final : public model::Events {
 public:
  StepEvents(double initial, double final_value, double time, const std::string& unit)
      : before_(initial, unit),
        after_(final_value, unit),
        before_mode_(std::make_shared<const StepLevelMode>(before_, time, false)),
        after_mode_(std::make_shared<const StepLevelMode>(
            after_, std::numeric_limits<double>::infinity(), true)),
        time_(time) {}
  std::size_t indicator_count() const override { return 0; }
  // At the sources' initial time (0): before the jump unless it is at or before that time.
  std::shared_ptr<const model::Mode> initial_mode() const override {
    return time_ <= 0.0 ? after_mode_ : before_mode_;
  }
  // The jump at its time; at another subsystem's event (a monolithic run asks every part) the
  // mode stays.
  model::EventOutcome handle(const model::Mode& mode, double t, std::span<double>,
                             std::span<const double>, const std::string&) const override {
    model::EventOutcome outcome;
    outcome.mode = t >= time_ || &mode == after_mode_.get() ? after_mode_ : before_mode_;
    return outcome;
  }
  std::shared_ptr<const model::Mode> mode_from_bytes(
      std::span<const std::byte> bytes) const override {
    if (bytes.size() != 1 || std::to_integer<int>(bytes[0]) > 1) {
      throw std::runtime_error("step: a mode is one byte, 0 or 1");
    }
    return std::to_integer<int>(bytes[0]) == 1 ? after_mode_ : before_mode_;
  }

 private:
  ConstantSource before_, after_;
  std::shared_ptr<const model::Mode> before_mode_, after_mode_;
  double time_;
};

}  // namespace

StepSource::StepSource(double initial, double final_value, double time, double width,
                       std::string unit)
    : TimeSource(unit), initial_(initial), final_(final_value), time_(time), width_(width) {
  require_finite({initial, final_value, time, width}, "step: initial, final, time and width");
  if (!(width >= 0.0)) throw std::invalid_argument("step: width must be >= 0");
  if (width == 0.0) events_ = std::make_unique<StepEvents>(initial, final_value, time, unit);
}

double StepSource::value(double t) const {
  if (t < time_) return initial_;
  if (!(t < time_ + width_)) return final_;
  const double s = (t - time_) / width_;
  return initial_ + (final_ - initial_) * (s * s * (3.0 - 2.0 * s));
}

std::string StepSource::law() const {
  if (width_ == 0.0) return fmt::format("step from {} to {} at t = {} s", initial_, final_, time_);
  return fmt::format("step from {} to {} over t = {}..{} s", initial_, final_, time_,
                     time_ + width_);
}

RampSource::RampSource(double start_time, double slope, double offset, double end_time,
                       std::string unit)
    : TimeSource(std::move(unit)),
      start_(start_time),
      slope_(slope),
      offset_(offset),
      end_(end_time) {
  require_finite({start_time, slope, offset}, "ramp: start_time, slope and offset");
  if (!(end_time >= start_time)) throw std::invalid_argument("ramp: end_time must be >= start");
}

double RampSource::value(double t) const {
  if (t < start_) return offset_;
  return offset_ + slope_ * (std::min(t, end_) - start_);
}

std::string RampSource::law() const {
  std::string text = fmt::format("ramp of slope {}/s from {} at t = {} s", slope_, offset_, start_);
  if (std::isfinite(end_)) text.append(fmt::format(", held from t = {} s", end_));
  return text;
}

SineSource::SineSource(double amplitude, double omega, double phase, double offset,
                       std::string unit)
    : TimeSource(std::move(unit)),
      amplitude_(amplitude),
      omega_(omega),
      phase_(phase),
      offset_(offset) {
  require_finite({amplitude, omega, phase, offset}, "sine: amplitude, omega, phase and offset");
}

double SineSource::value(double t) const {
  return offset_ + amplitude_ * std::sin(omega_ * t + phase_);
}

std::string SineSource::law() const {
  return fmt::format("{} + {}·sin({}·t + {}) (omega in rad/s)", offset_, amplitude_, omega_,
                     phase_);
}

Gain::Gain(double k, std::string unit) : StatelessSubsystem(std::move(unit)), k_(k) {
  require_finite({k}, "gain: k");
}

std::string Gain::output_description(std::size_t i) const {
  if (i != 0) throw std::out_of_range("gain output_description: out of range");
  return fmt::format("{}·u", k_);
}

std::string Gain::output_name(std::size_t i) const {
  if (i != 0) throw std::out_of_range("gain output_name: out of range");
  return "y";
}

std::string Gain::input_name(std::size_t i) const {
  if (i != 0) throw std::out_of_range("gain input_name: out of range");
  return "u";
}

void Gain::outputs(double, std::span<const double>, std::span<const double> u,
                   std::span<double> y) const {
  assert(u.size() == 1 && y.size() == 1);
  y[0] = k_ * u[0];
}

void Gain::feedthrough_jacobian(double, std::span<const double>, std::span<const double>,
                                std::span<double> values) const {
  assert(values.size() == 1);
  values[0] = k_;
}

Sum::Sum(std::vector<double> signs, std::string unit)
    : StatelessSubsystem(std::move(unit)), signs_(std::move(signs)) {
  if (signs_.empty()) throw std::invalid_argument("sum: signs must list at least one input");
  for (const double s : signs_) require_finite({s}, "sum: signs");
}

std::string Sum::output_description(std::size_t i) const {
  if (i != 0) throw std::out_of_range("sum output_description: out of range");
  std::string text;
  for (std::size_t k = 0; k < signs_.size(); ++k) {
    const double s = signs_[k];
    if (k > 0) text.append(s < 0.0 ? " - " : " + ");
    if (k == 0 && s < 0.0) text.push_back('-');
    if (std::abs(s) != 1.0) text.append(fmt::format("{}·", std::abs(s)));
    text.append(fmt::format("u_{}", k + 1));
  }
  return text;
}

std::string Sum::output_name(std::size_t i) const {
  if (i != 0) throw std::out_of_range("sum output_name: out of range");
  return "y";
}

std::string Sum::input_name(std::size_t i) const {
  if (i >= signs_.size()) throw std::out_of_range("sum input_name: out of range");
  return "u_" + std::to_string(i + 1);
}

void Sum::outputs(double, std::span<const double>, std::span<const double> u,
                  std::span<double> y) const {
  assert(u.size() == signs_.size() && y.size() == 1);
  double sum = 0.0;
  for (std::size_t i = 0; i < signs_.size(); ++i) sum += signs_[i] * u[i];
  y[0] = sum;
}

void Sum::feedthrough_jacobian(double, std::span<const double>, std::span<const double>,
                               std::span<double> values) const {
  assert(values.size() == signs_.size());
  for (std::size_t i = 0; i < signs_.size(); ++i) values[i] = signs_[i];
}

// ---- registry entries ----

namespace {

ParameterSpec number_spec(std::string name, double default_value, bool required, std::string doc,
                          std::string unit = "", Bound bound = Bound::kAny) {
  return {std::move(name), ParameterType::kNumber, required, default_value, bound, 0, "",
          std::move(unit), std::move(doc)};
}

ParameterSpec unit_spec() {
  return {"unit",
          ParameterType::kString,
          false,
          std::string(),
          Bound::kAny,
          0,
          "",
          "",
          "the unit of the output, as the results show it"};
}

// A problem at the first of `keys` whose value is not finite.
std::optional<ParameterProblem> finite(const ParameterValues& v,
                                       std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!std::isfinite(v.number(key))) return ParameterProblem{key, "must be finite (got {got})"};
  }
  return std::nullopt;
}

ModelEntry entry(std::string name, std::string summary, std::vector<ParameterSpec> parameters) {
  ModelEntry e;
  e.name = std::move(name);
  e.summary = std::move(summary);
  e.parameters = std::move(parameters);
  e.parameters.push_back(unit_spec());
  return e;
}

}  // namespace

ModelEntry detail::constant_entry() {
  ModelEntry e = entry("constant", "source: y = value",
                       {number_spec("value", 0.0, true, "the output, in `unit`")});
  e.check = [](const ParameterValues& v) { return finite(v, {"value"}); };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<ConstantSource>(v.number("value"), v.string("unit"));
  };
  return e;
}

ModelEntry detail::step_entry() {
  ModelEntry e =
      entry("step", "source: y = initial before time, final from time on",
            {number_spec("initial", 0.0, false, "the output before `time`"),
             number_spec("final", 0.0, true, "the output from `time` on"),
             number_spec("time", 0.0, true, "the time of the step", "s"),
             number_spec("width", 0.0, false,
                         "the duration of a smooth (C1 cubic) step; 0: a jump, a time event that "
                         "macro steps end on",
                         "s", Bound::kNonNegative)});
  e.check = [](const ParameterValues& v) {
    return finite(v, {"initial", "final", "time", "width"});
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<StepSource>(v.number("initial"), v.number("final"), v.number("time"),
                                        v.number("width"), v.string("unit"));
  };
  return e;
}

ModelEntry detail::ramp_entry() {
  ModelEntry e =
      entry("ramp", "source: y = offset + slope·(min(t, end_time) − start_time) from start_time",
            {number_spec("slope", 0.0, true, "the rise per second of the output", "1/s"),
             number_spec("start_time", 0.0, false, "the time the ramp starts", "s"),
             number_spec("offset", 0.0, false, "the output before start_time"),
             number_spec("end_time", std::numeric_limits<double>::infinity(), false,
                         "the time the ramp stops and holds its value (default: never)", "s")});
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    if (auto problem = finite(v, {"slope", "start_time", "offset"})) return problem;
    if (!(v.number("end_time") >= v.number("start_time"))) {
      return ParameterProblem{"end_time", fmt::format("must be >= start_time = {} (got {{got}})",
                                                      v.number("start_time"))};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<RampSource>(v.number("start_time"), v.number("slope"),
                                        v.number("offset"), v.number("end_time"), v.string("unit"));
  };
  return e;
}

ModelEntry detail::sine_entry() {
  ModelEntry e =
      entry("sine", "source: y = offset + amplitude·sin(ω·t + phase), ω = 2π·frequency or omega",
            {number_spec("amplitude", 0.0, true, "the amplitude"),
             number_spec("frequency", 0.0, false, "the frequency (or omega)", "Hz"),
             number_spec("omega", 0.0, false, "the angular frequency (or frequency)", "rad/s"),
             number_spec("phase", 0.0, false, "the phase at t = 0", "rad"),
             number_spec("offset", 0.0, false, "the mean value")});
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    if (auto problem = finite(v, {"amplitude", "frequency", "omega", "phase", "offset"})) {
      return problem;
    }
    if (v.number("frequency") != 0.0 && v.number("omega") != 0.0) {
      return ParameterProblem{"omega", "give frequency or omega, not both"};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    const double omega = v.number("omega") != 0.0 ? v.number("omega")
                                                  : 2.0 * std::numbers::pi * v.number("frequency");
    return std::make_unique<SineSource>(v.number("amplitude"), omega, v.number("phase"),
                                        v.number("offset"), v.string("unit"));
  };
  return e;
}

ModelEntry detail::gain_entry() {
  ModelEntry e = entry("gain", "block: y = k·u (direct feed-through)",
                       {number_spec("k", 0.0, true, "the gain")});
  e.check = [](const ParameterValues& v) { return finite(v, {"k"}); };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<Gain>(v.number("k"), v.string("unit"));
  };
  return e;
}

ModelEntry detail::sum_entry() {
  ModelEntry e = entry("sum", "block: y = Σ s_i·u_i over inputs u_1 … u_n (direct feed-through)",
                       {{"signs", ParameterType::kNumberList, true, std::vector<double>{},
                         Bound::kAny, 0, "", "", "the sign (or weight) s_i of every input u_i"}});
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    const auto& signs = v.numbers("signs");
    if (signs.empty()) return ParameterProblem{"signs", "must list at least one input's sign"};
    for (const double s : signs) {
      if (!std::isfinite(s)) return ParameterProblem{"signs", "must be finite numbers"};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    return std::make_unique<Sum>(v.numbers("signs"), v.string("unit"));
  };
  return e;
}

}  // namespace macrostep::library
