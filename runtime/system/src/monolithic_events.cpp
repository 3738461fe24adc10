// The events of a monolithic system's subsystems (monolithic_system.hpp, model/events.hpp): a
// mode of the whole is the modes of its parts.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "macrostep/model/subsystem_view.hpp"
#include "macrostep/system/monolithic_system.hpp"

namespace macrostep::system {

namespace {

class MonolithicMode;

// A mode's equations: the monolithic system's with each part in its mode.
class ModeView final : public model::SubsystemView {
 public:
  ModeView(const MonolithicSystem& system, const MonolithicMode& mode)
      : SubsystemView(system), system_(system), mode_(mode) {}
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double>, std::span<double> r) const override;
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double>, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override;
  // The parts' nominals in their modes (an event may have changed one's), else the system's.
  std::span<const double> state_nominals() const override;

 private:
  const MonolithicSystem& system_;
  const MonolithicMode& mode_;
};

// part_modes[L]: subsystem L's mode (null for one without events); parts[L] its equations.
class MonolithicMode final : public model::Mode {
 public:
  MonolithicMode(const MonolithicSystem& system, const CoupledSystem& coupled,
                 std::vector<std::shared_ptr<const model::Mode>> part_modes,
                 std::span<const std::size_t> indicator_offsets)
      : system_(system),
        coupled_(coupled),
        part_modes_(std::move(part_modes)),
        indicator_offsets_(indicator_offsets),
        equations_(system, *this) {
    for (std::size_t L = 0; L < part_modes_.size(); ++L) {
      parts_.push_back(part_modes_[L] ? &part_modes_[L]->equations() : &coupled.subsystem(L));
      if (part_modes_[L]) next_ = std::min(next_, part_modes_[L]->next_time_event());
    }
    gather_nominals();
  }
  const model::Subsystem& equations() const override { return equations_; }
  double next_time_event() const override { return next_; }
  void indicators(double t, std::span<const double> z, std::span<const double>,
                  std::span<double> g) const override {
    std::vector<double> u;
    for (std::size_t L = 0; L < part_modes_.size(); ++L) {
      const std::size_t count = indicator_offsets_[L + 1] - indicator_offsets_[L];
      if (!part_modes_[L] || count == 0) continue;
      part_modes_[L]->indicators(t, part_states(L, z), part_inputs(L, z, u),
                                 g.subspan(indicator_offsets_[L], count));
    }
  }
  bool step_event(double t, std::span<const double> z, std::span<const double>) const override {
    std::vector<double> u;
    for (std::size_t L = 0; L < part_modes_.size(); ++L) {
      if (part_modes_[L] && part_modes_[L]->step_event(t, part_states(L, z), part_inputs(L, z, u)))
        return true;
    }
    return false;
  }
  // The number of parts, then each part's mode bytes with their length (0: no events).
  std::vector<std::byte> serialize() const override {
    std::vector<std::vector<std::byte>> parts;
    std::size_t size = sizeof(std::uint64_t);
    for (const auto& mode : part_modes_) {
      parts.push_back(mode ? mode->serialize() : std::vector<std::byte>{});
      size += sizeof(std::uint64_t) + parts.back().size();
    }
    std::vector<std::byte> bytes(size);
    std::size_t at = 0;
    const auto put = [&](const void* data, std::size_t count) {
      if (count > 0) std::memcpy(bytes.data() + at, data, count);
      at += count;
    };
    const std::uint64_t count = parts.size();
    put(&count, sizeof count);
    for (const auto& part : parts) {
      const std::uint64_t length = part.size();
      put(&length, sizeof length);
      put(part.data(), part.size());
    }
    return bytes;
  }

  const std::vector<std::shared_ptr<const model::Mode>>& part_modes() const { return part_modes_; }
  // Empty where every part's nominals in its mode are its subsystem's.
  const std::vector<double>& nominals() const { return nominals_; }
  const MonolithicSystem::Parts& parts() const { return parts_; }
  std::span<const double> part_states(std::size_t L, std::span<const double> z) const {
    return z.subspan(system_.state_offset(L), coupled_.subsystem(L).state_size());
  }
  std::span<const double> part_inputs(std::size_t L, std::span<const double> z,
                                      std::vector<double>& u) const {
    u.resize(coupled_.subsystem(L).input_size());
    system_.gather_inputs(L, z, u);
    return u;
  }

 private:
  const MonolithicSystem& system_;
  const CoupledSystem& coupled_;
  std::vector<std::shared_ptr<const model::Mode>> part_modes_;
  std::span<const std::size_t> indicator_offsets_;
  MonolithicSystem::Parts parts_;
  double next_ = std::numeric_limits<double>::infinity();
  std::vector<double> nominals_;
  ModeView equations_;

  void gather_nominals() {
    bool changed = false;
    for (std::size_t L = 0; L < parts_.size(); ++L) {
      changed = changed || !std::ranges::equal(parts_[L]->state_nominals(),
                                               coupled_.subsystem(L).state_nominals());
    }
    if (!changed) return;
    nominals_.assign(system_.state_size(), 1.0);  // the coupling states' stay 1
    for (std::size_t L = 0; L < parts_.size(); ++L) {
      const auto part = parts_[L]->state_nominals();
      std::copy(part.begin(), part.end(),
                nominals_.begin() + static_cast<std::ptrdiff_t>(system_.state_offset(L)));
    }
  }
};

std::span<const double> ModeView::state_nominals() const {
  return mode_.nominals().empty() ? system_.state_nominals() : mode_.nominals();
}

void ModeView::residual(double t, std::span<const double> z, std::span<const double> zp,
                        std::span<const double>, std::span<double> r) const {
  system_.residual_in(mode_.parts(), t, z, zp, r);
}
void ModeView::jacobian(double t, std::span<const double> z, std::span<const double> zp,
                        std::span<const double>, double cj, std::span<double> values) const {
  system_.jacobian_in(mode_.parts(), t, z, zp, cj, values);
}
void ModeView::outputs(double t, std::span<const double> z, std::span<const double>,
                       std::span<double> y) const {
  system_.outputs_in(mode_.parts(), t, z, y);
}

}  // namespace

class MonolithicSystem::PartEvents final : public model::Events {
 public:
  explicit PartEvents(const MonolithicSystem& system) : system_(system) {
    const CoupledSystem& coupled = system.system_;
    offsets_.assign(1, 0);
    for (std::size_t L = 0; L < coupled.subsystem_count(); ++L) {
      const model::Events* events = coupled.subsystem(L).events();
      offsets_.push_back(offsets_.back() + (events ? events->indicator_count() : 0));
    }
  }
  std::size_t indicator_count() const override { return offsets_.back(); }
  bool step_events() const override {
    const CoupledSystem& coupled = system_.system_;
    for (std::size_t L = 0; L < coupled.subsystem_count(); ++L) {
      const model::Events* events = coupled.subsystem(L).events();
      if (events != nullptr && events->step_events()) return true;
    }
    return false;
  }
  std::shared_ptr<const model::Mode> initial_mode() const override {
    const CoupledSystem& coupled = system_.system_;
    std::vector<std::shared_ptr<const model::Mode>> modes(coupled.subsystem_count());
    for (std::size_t L = 0; L < modes.size(); ++L) {
      if (const model::Events* events = coupled.subsystem(L).events())
        modes[L] = events->initial_mode();
    }
    return make(std::move(modes));
  }
  model::EventOutcome handle(const model::Mode& mode, double t, std::span<double> z,
                             std::span<const double>, const std::string& why) const override;
  std::shared_ptr<const model::Mode> mode_from_bytes(
      std::span<const std::byte> bytes) const override;

 private:
  std::shared_ptr<const model::Mode> make(
      std::vector<std::shared_ptr<const model::Mode>> modes) const {
    return std::make_shared<const MonolithicMode>(system_, system_.system_, std::move(modes),
                                                  offsets_);
  }
  const MonolithicSystem& system_;
  std::vector<std::size_t> offsets_;  // subsystem L's indicators start at offsets_[L]
};

model::EventOutcome MonolithicSystem::PartEvents::handle(const model::Mode& mode, double t,
                                                         std::span<double> z,
                                                         std::span<const double>,
                                                         const std::string& why) const {
  const auto& whole = static_cast<const MonolithicMode&>(mode);
  const CoupledSystem& coupled = system_.system_;
  auto modes = whole.part_modes();
  model::EventOutcome outcome;
  std::vector<double> u;
  for (std::size_t L = 0; L < modes.size(); ++L) {
    if (!modes[L]) continue;
    const model::Subsystem& part = coupled.subsystem(L);
    const std::span<double> z_L = z.subspan(system_.state_offset(L), part.state_size());
    whole.part_inputs(L, z, u);
    model::EventOutcome o = part.events()->handle(*modes[L], t, z_L, u, why);
    if (o.terminate) {
      o.reason = fmt::format("subsystem {}: {}", L + 1, o.reason);
      return o;
    }
    outcome.states_changed = outcome.states_changed || o.states_changed;
    modes[L] = std::move(o.mode);
  }
  outcome.mode = make(std::move(modes));
  const auto& next = static_cast<const MonolithicMode&>(*outcome.mode);
  if (system_.settle_couplings(next.parts(), t, z)) outcome.states_changed = true;
  return outcome;
}

std::shared_ptr<const model::Mode> MonolithicSystem::PartEvents::mode_from_bytes(
    std::span<const std::byte> bytes) const {
  std::size_t at = 0;
  const auto take = [&]() {
    std::uint64_t value = 0;
    if (bytes.size() - at < sizeof value) throw std::runtime_error("a mode's bytes end early");
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  };
  const CoupledSystem& coupled = system_.system_;
  if (take() != coupled.subsystem_count()) {
    throw std::runtime_error("a mode of a system with another number of subsystems");
  }
  std::vector<std::shared_ptr<const model::Mode>> modes(coupled.subsystem_count());
  for (std::size_t L = 0; L < modes.size(); ++L) {
    const std::uint64_t length = take();
    if (bytes.size() - at < length) throw std::runtime_error("a mode's bytes end early");
    const model::Events* events = coupled.subsystem(L).events();
    if ((events != nullptr) != (length > 0)) {
      throw std::runtime_error(fmt::format("subsystem {}'s mode does not fit its events", L + 1));
    }
    if (events) modes[L] = events->mode_from_bytes(bytes.subspan(at, length));
    at += length;
  }
  if (at != bytes.size()) throw std::runtime_error("a mode's bytes go on after its end");
  return make(std::move(modes));
}

void MonolithicSystem::set_up_events() {
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    if (system_.subsystem(L).events() != nullptr) {
      events_ = std::make_unique<PartEvents>(*this);
      return;
    }
  }
}

MonolithicSystem::~MonolithicSystem() = default;

const model::Events* MonolithicSystem::events() const {
  return events_.get();
}

}  // namespace macrostep::system
