// Events of an FMU subsystem (fmu_subsystem.hpp): its modes, their equations, the event
// iteration and the modes' bytes.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fmu_subsystem.hpp"

namespace macrostep::fmu {

// ---- a mode's equations: the owner's, in the mode -----------------------------------------

ModeEquations::ModeEquations(const FmuSubsystem& owner, const FmuMode& mode)
    : SubsystemView(owner), owner_(owner), mode_(mode) {}
void ModeEquations::residual(double t, std::span<const double> z, std::span<const double> zp,
                             std::span<const double> u, std::span<double> r) const {
  owner_.residual_in(&mode_, t, z, zp, u, r);
}
void ModeEquations::jacobian(double t, std::span<const double> z, std::span<const double> zp,
                             std::span<const double> u, double cj, std::span<double> values) const {
  owner_.jacobian_in(&mode_, t, z, zp, u, cj, values);
}
void ModeEquations::outputs(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> y) const {
  owner_.outputs_in(&mode_, t, z, u, y);
}
std::span<const double> ModeEquations::state_nominals() const {
  return mode_.nominals().empty() ? owner_.state_nominals() : mode_.nominals();
}

// ---- modes ------------------------------------------------------------------------------------

void FmuMode::indicators(double t, std::span<const double> z, std::span<const double> u,
                         std::span<double> g) const {
  owner_.indicators_in(*this, t, z, u, g);
}

bool FmuMode::step_event(double t, std::span<const double> z, std::span<const double> u) const {
  return owner_.step_event_in(*this, t, z, u);
}

std::vector<std::byte> FmuMode::serialize() const {
  if (live_) {
    throw std::runtime_error(
        "an FMU without canGetAndSetFMUstate and canSerializeFMUstate cannot save its state "
        "(for a checkpoint or a worker's restart)");
  }
  const std::uint64_t count = nominals_.size();
  const std::size_t head = 2 * sizeof(double) + count * sizeof(double);
  std::vector<std::byte> bytes(head + state_.size());
  std::memcpy(bytes.data(), &next_time_event_, sizeof(double));
  std::memcpy(bytes.data() + sizeof(double), &count, sizeof count);
  if (count > 0) {
    std::memcpy(bytes.data() + 2 * sizeof(double), nominals_.data(), count * sizeof(double));
  }
  if (!state_.empty()) std::memcpy(bytes.data() + head, state_.data(), state_.size());
  return bytes;
}

std::shared_ptr<const model::Mode> FmuSubsystem::mode_from_bytes(
    std::span<const std::byte> bytes) const {
  if (live_) {
    throw std::runtime_error(fmt::format(
        "FMU {}: cannot set its state (no canGetAndSetFMUstate and canSerializeFMUstate)", path_));
  }
  const auto too_short = [&] {
    return std::runtime_error(
        fmt::format("FMU {}: a mode of {} bytes is too short", path_, bytes.size()));
  };
  if (bytes.size() < 2 * sizeof(double)) throw too_short();
  double next = 0.0;
  std::uint64_t count = 0;
  std::memcpy(&next, bytes.data(), sizeof(double));
  std::memcpy(&count, bytes.data() + sizeof(double), sizeof count);
  if (count != 0 && count != states_.size()) {
    throw std::runtime_error(
        fmt::format("FMU {}: a mode with {} nominals for {} states", path_, count, states_.size()));
  }
  const std::size_t head = 2 * sizeof(double) + count * sizeof(double);
  if (bytes.size() < head) throw too_short();
  std::vector<double> nominals(count);
  if (count > 0) {
    std::memcpy(nominals.data(), bytes.data() + 2 * sizeof(double), count * sizeof(double));
  }
  for (const double v : nominals) {
    if (!model::valid_nominal(v)) {
      throw std::runtime_error(fmt::format("FMU {}: a mode with the nominal {}", path_, v));
    }
  }
  std::vector<std::byte> state(bytes.begin() + static_cast<std::ptrdiff_t>(head), bytes.end());
  return std::make_shared<const FmuMode>(*this, next_mode_.fetch_add(1), std::move(state), next,
                                         std::move(nominals));
}

// ---- events -----------------------------------------------------------------------------------

void FmuSubsystem::indicators_in(const FmuMode& mode, double t, std::span<const double> z,
                                 std::span<const double> u, std::span<double> g) const {
  if (g.empty()) return;  // time or step events only: no indicator function to call
  Lease instance(*this, &mode);
  if (!set_point(*instance, t, z, u) || !instance->event_indicators(g)) {
    std::fill(g.begin(), g.end(), std::numeric_limits<double>::quiet_NaN());
  }
}

// fmi*CompletedIntegratorStep may change the FMU's internal state (delay buffers, sampled
// values) without an event: the instance is marked as in no mode, so that the next lease sets the
// mode's state again.
bool FmuSubsystem::step_event_in(const FmuMode& mode, double t, std::span<const double> z,
                                 std::span<const double> u) const {
  if (!completed_steps_) return false;
  Lease instance(*this, &mode);
  instance->mode = Instance::kNoMode;
  bool terminate = false;
  if (!set_point(*instance, t, z, u)) {
    throw FmuCallError(
        fmt::format("FMU {}: its state at the end of a step at t = {:.9g} was "
                    "discarded",
                    path_, t));
  }
  const bool event = instance->completed_integrator_step(terminate);
  return event || terminate;
}

std::shared_ptr<const model::Mode> FmuSubsystem::advance(const model::Mode& mode, double t0,
                                                         double t1,
                                                         const model::InputFunction* input) const {
  Lease instance(*this, &static_cast<const FmuMode&>(mode));
  instance->mode = Instance::kNoMode;  // until the new mode is made
  std::vector<double> u(input_vr_.size()), ahead(u.size()), behind(u.size());
  if (input) input->evaluate(t0, u);
  if (!set_point(*instance, t0, {}, u)) {
    throw FmuCallError(fmt::format("FMU {}: its inputs at t = {:.9g} were discarded", path_, t0));
  }
  if (interpolates_inputs_ && input && !real_input_vr_.empty()) {
    // The slope of the (Real) inputs' polynomial at t0: central differences over 1e-6 of the step
    // (truncation O(1e-12) of the step's scale, rounding about 1e-10 of the slope).
    const double delta = 1e-6 * (t1 - t0);
    input->evaluate(t0 + delta, ahead);
    input->evaluate(t0 - delta, behind);
    std::vector<double> slope;
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (input_types_[i] == VariableType::kReal)
        slope.push_back((ahead[i] - behind[i]) / (2.0 * delta));
    }
    instance->set_input_derivatives(real_input_vr_, slope);
  }
  if (!instance->do_step(t0, t1 - t0)) {
    throw FmuCallError(
        fmt::format("FMU {}: discarded its step from t = {:.9g} over {:.9g}", path_, t0, t1 - t0));
  }
  return next_mode(*instance, std::numeric_limits<double>::infinity(), {});
}

std::shared_ptr<const FmuMode> FmuSubsystem::next_mode(Instance& instance, double next_time_event,
                                                       std::vector<double> nominals) const {
  const std::uint64_t number = next_mode_.fetch_add(1);
  if (live_) {  // the caller holds the live instance's lock (its Lease)
    live_number_ = number;
    return std::make_shared<const FmuMode>(*this, number, std::vector<std::byte>{}, next_time_event,
                                           std::move(nominals), /*live=*/true);
  }
  auto next = std::make_shared<const FmuMode>(*this, number, instance.serialize_state(),
                                              next_time_event, std::move(nominals));
  instance.mode = number;
  return next;
}

std::vector<double> FmuSubsystem::nominals_after_event(Instance& instance, double t) const {
  if (states_.empty()) return {};  // nothing to scale (and no call with zero states)
  std::string bad;
  std::vector<double> nominals = read_nominals(instance, bad);
  if (!bad.empty()) {
    throw FmuCallError(fmt::format("FMU {}: after the event at t = {:.9g} {}", path_, t, bad));
  }
  return nominals;
}

model::EventOutcome FmuSubsystem::handle(const model::Mode& mode, double t, std::span<double> z,
                                         std::span<const double> u, const std::string& why) const {
  Lease instance(*this, &static_cast<const FmuMode&>(mode));
  instance->mode = Instance::kNoMode;  // until the new mode is made
  if (!set_point(*instance, t, z, u)) {
    throw FmuCallError(
        fmt::format("FMU {}: its state at the {} at t = {:.9g} was discarded", path_, why, t));
  }
  const Instance::EventUpdate update = instance->update_discrete_states();
  model::EventOutcome outcome;
  outcome.terminate = update.terminate;
  if (update.terminate) {
    outcome.reason = fmt::format("FMU {} set terminateSimulation", path_);
    return outcome;
  }
  if (update.states_changed) {
    instance->continuous_states(z);
    outcome.states_changed = true;
  }
  // The nominals stay the mode's until an event's iteration reports them changed.
  std::vector<double> nominals = update.nominals_changed
                                     ? nominals_after_event(*instance, t)
                                     : static_cast<const FmuMode&>(mode).nominals();
  outcome.mode = next_mode(*instance, update.next_time_event, std::move(nominals));
  return outcome;
}

}  // namespace macrostep::fmu
