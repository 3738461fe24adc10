// The restarted copy of a coupled system (restarted_system.hpp).
#include "macrostep/system/restarted_system.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "macrostep/model/subsystem_view.hpp"

namespace macrostep::system {

namespace {

// The base subsystem with another initial time and state; everything else forwarded.
class RestartedSubsystem final : public model::SubsystemView {
 public:
  RestartedSubsystem(const model::Subsystem& base, double t, std::vector<double> z)
      : SubsystemView(base), t_(t), z_(std::move(z)) {}

  double initial_time() const override { return t_; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    (void)u0;
    std::copy(z_.begin(), z_.end(), z0.begin());
    std::fill(zp0.begin(), zp0.end(), 0.0);  // the restart at t_ makes it consistent
  }
  void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> values) const override {
    base().feedthrough_jacobian(t, z, u, values);
  }
  bool input_acceleration(std::span<double> accel,
                          std::span<model::StateRole> roles) const override {
    return base().input_acceleration(accel, roles);
  }
  model::EntryPattern output_jacobian_pattern() const override {
    return base().output_jacobian_pattern();
  }
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override {
    base().output_jacobian(t, z, u, values);
  }
  model::EntryPattern input_jacobian_pattern() const override {
    return base().input_jacobian_pattern();
  }
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override {
    base().input_jacobian(t, z, zp, u, values);
  }

 private:
  double t_;
  std::vector<double> z_;
};

// The base law, forwarded.
class LawView final : public CouplingLaw {
 public:
  explicit LawView(const CouplingLaw& base) : base_(base) {}
  std::span<const OutputRef> reads() const override { return base_.reads(); }
  std::span<const std::string> variable_names() const override { return base_.variable_names(); }
  std::vector<std::string> variable_units(std::span<const std::string> units) const override {
    return base_.variable_units(units);
  }
  std::vector<std::string> variable_descriptions() const override {
    return base_.variable_descriptions();
  }
  void evaluate(std::span<const double> y, std::span<double> u) const override {
    base_.evaluate(y, u);
  }
  void jacobian(std::span<const double> y, std::span<double> d) const override {
    base_.jacobian(y, d);
  }
  bool has_feedthrough() const override { return base_.has_feedthrough(); }
  bool is_constraint() const override { return base_.is_constraint(); }
  bool has_rate() const override { return base_.has_rate(); }
  void rate(std::span<const double> y, std::span<double> u_dot) const override {
    base_.rate(y, u_dot);
  }

 private:
  const CouplingLaw& base_;
};

void check_states(const CoupledSystem& base, std::span<const std::vector<double>> states) {
  if (states.size() != base.subsystem_count()) {
    throw std::invalid_argument("restarted_system: " + std::to_string(states.size()) +
                                " states for " + std::to_string(base.subsystem_count()) +
                                " subsystems");
  }
  for (std::size_t i = 0; i < states.size(); ++i) {
    const model::Subsystem& s = base.subsystem(i);
    if (states[i].size() != s.state_size()) {
      throw std::invalid_argument("restarted_system: subsystem " + std::to_string(i + 1) + " has " +
                                  std::to_string(s.state_size()) + " states, given " +
                                  std::to_string(states[i].size()));
    }
    for (const double v : states[i]) {
      if (!std::isfinite(v)) {
        throw std::invalid_argument("restarted_system: a state of subsystem " +
                                    std::to_string(i + 1) + " is not finite");
      }
    }
    if (s.events() != nullptr) {
      throw std::invalid_argument(
          "restarted_system: subsystem " + std::to_string(i + 1) +
          " has events; its mode in the middle of a run does not follow from its state");
    }
  }
}

}  // namespace

CoupledSystem restarted_system(const CoupledSystem& base, double t,
                               std::span<const std::vector<double>> states) {
  check_states(base, states);
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  InputFeeds feeds(base.subsystem_count());
  for (std::size_t i = 0; i < base.subsystem_count(); ++i) {
    const model::Subsystem& s = base.subsystem(i);
    subsystems.push_back(std::make_unique<RestartedSubsystem>(s, t, states[i]));
    for (std::size_t k = 0; k < s.input_size(); ++k) {
      const auto f = base.input_feeds(i, k);
      feeds[i].emplace_back(f.begin(), f.end());
    }
  }
  std::vector<std::unique_ptr<CouplingLaw>> laws;
  for (std::size_t k = 0; k < base.law_count(); ++k)
    laws.push_back(std::make_unique<LawView>(base.law(k)));
  const auto monitored = base.monitored_outputs();
  return CoupledSystem::with_input_feeds(std::move(subsystems), std::move(laws), std::move(feeds),
                                         {monitored.begin(), monitored.end()});
}

}  // namespace macrostep::system
