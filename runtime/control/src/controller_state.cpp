// MacroStepController::export_state / import_state (ipc/schema/state.capnp,
// ControllerState). Doubles travel as Float64 bit patterns and options are compared bit for
// bit, so that an imported controller computes exactly what the exporter would have.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/state.capnp.h"

namespace macrostep::control {
namespace {

namespace schema = ipc::schema;

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("MacroStepController::import_state: malformed or inconsistent state: " +
                           what);
}
[[noreturn]] void mismatch(const std::string& what) {
  throw std::invalid_argument("MacroStepController::import_state: " + what);
}

template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
  } else {
    return a == b;
  }
}

template <class E>
std::uint8_t code(E e) {
  return static_cast<std::uint8_t>(e);
}

void write_list(capnp::List<double>::Builder list, const std::vector<double>& v) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, v[i]);
}

void write_options(schema::MacroStepOptions::Builder b, const MacroStepOptions& o) {
  b.setMode(code(o.mode));
  b.setTStart(o.t_start);
  b.setTEnd(o.t_end);
  b.setH(o.h);
  b.setEstimator(code(o.estimator));
  b.setKappaFixed(o.kappa_fixed);
  b.setVariableStart(o.variable_start);
  b.setFixedStartRamp(o.fixed_start_ramp);
  b.setHistoryCapacity(o.history_capacity);
  b.setOrderStrategy(code(o.order.strategy));
  b.setKappaMax(o.order.kappa_max);
  b.setSafety(o.step.safety);
  b.setRMin(o.step.r_min);
  b.setRMax(o.step.r_max);
  b.setDeadZone(o.step.dead_zone);
  b.setHMax(o.step.h_max);
  const ErrorTolerances& t = o.tolerances;
  b.setRtol(t.rtol);
  b.setAtolPos(t.atol_pos);
  b.setAtolVel(t.atol_vel);
  b.setAtolU(t.atol_u);
  write_list(b.initAtolPosEach(static_cast<unsigned>(t.atol_pos_each.size())), t.atol_pos_each);
  write_list(b.initAtolVelEach(static_cast<unsigned>(t.atol_vel_each.size())), t.atol_vel_each);
  write_list(b.initAtolUEach(static_cast<unsigned>(t.atol_u_each.size())), t.atol_u_each);
}

void check_field(const char* name, auto exported, auto own) {
  if (!same_bits(exported, own)) {
    mismatch(fmt::format("state exported with MacroStepOptions {} = {}, the given options have {}",
                         name, exported, own));
  }
}

void check_list(const char* name, capnp::List<double>::Reader exported,
                const std::vector<double>& own) {
  if (exported.size() != own.size()) {
    mismatch(fmt::format("state exported with {} {} values, the given options have {}", name,
                         exported.size(), own.size()));
  }
  for (unsigned i = 0; i < exported.size(); ++i) check_field(name, exported[i], own[i]);
}

// Every option steers the controller (t_end clips the last step, tolerances weight the norms).
void check_options(schema::MacroStepOptions::Reader r, const MacroStepOptions& o) {
  check_field("mode", r.getMode(), code(o.mode));
  check_field("t_start", r.getTStart(), o.t_start);
  check_field("t_end", r.getTEnd(), o.t_end);
  check_field("h", r.getH(), o.h);
  check_field("estimator", r.getEstimator(), code(o.estimator));
  check_field("kappa_fixed", r.getKappaFixed(), o.kappa_fixed);
  check_field("variable_start", r.getVariableStart(), o.variable_start);
  check_field("fixed_start_ramp", r.getFixedStartRamp(), o.fixed_start_ramp);
  check_field("history_capacity", r.getHistoryCapacity(), std::uint64_t{o.history_capacity});
  check_field("order.strategy", r.getOrderStrategy(), code(o.order.strategy));
  check_field("order.kappa_max", r.getKappaMax(), o.order.kappa_max);
  check_field("step.safety", r.getSafety(), o.step.safety);
  check_field("step.r_min", r.getRMin(), o.step.r_min);
  check_field("step.r_max", r.getRMax(), o.step.r_max);
  check_field("step.dead_zone", r.getDeadZone(), o.step.dead_zone);
  check_field("step.h_max", r.getHMax(), o.step.h_max);
  const ErrorTolerances& t = o.tolerances;
  check_field("tolerances.rtol", r.getRtol(), t.rtol);
  check_field("tolerances.atol_pos", r.getAtolPos(), t.atol_pos);
  check_field("tolerances.atol_vel", r.getAtolVel(), t.atol_vel);
  check_field("tolerances.atol_u", r.getAtolU(), t.atol_u);
  check_list("tolerances.atol_pos_each", r.getAtolPosEach(), t.atol_pos_each);
  check_list("tolerances.atol_vel_each", r.getAtolVelEach(), t.atol_vel_each);
  check_list("tolerances.atol_u_each", r.getAtolUEach(), t.atol_u_each);
}

}  // namespace

using Check = OrderController::OrderChangeCheck;

void write_check(schema::OrderChangeCheck::Builder b, const Check& c) {
  b.setLoweredFrom(c.lowered_from);
  b.setFallbackH(c.fallback_h);
  b.setRefutedH(c.refuted_h);
  b.setFailedLowerings(c.failed_lowerings);
  b.setStepsAtZero(c.steps_at_zero);
  b.setLowerHold(c.lower_hold);
  b.setNextLowerHold(c.next_lower_hold);
}

Check read_check(schema::OrderChangeCheck::Reader r) {
  Check c;
  c.lowered_from = r.getLoweredFrom();
  c.fallback_h = r.getFallbackH();
  c.refuted_h = r.getRefutedH();
  c.failed_lowerings = r.getFailedLowerings();
  c.steps_at_zero = r.getStepsAtZero();
  c.lower_hold = r.getLowerHold();
  c.next_lower_hold = r.getNextLowerHold();
  const auto in = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  if (!in(c.lowered_from, -1, kMaxKappa) || !in(c.lower_hold, 0, Check::kLongestHold) ||
      !in(c.next_lower_hold, Check::kFirstHold, Check::kLongestHold) || c.failed_lowerings < 0 ||
      c.steps_at_zero < 0 || !(c.fallback_h >= 0.0) || !(c.refuted_h >= 0.0)) {
    malformed("order-change check out of range");
  }
  return c;
}

// Reads and writes the controller's private members.
struct ControllerStateCodec {
  static void write(schema::ControllerState::Builder root, const MacroStepController& c) {
    root.setFormatVersion(kControllerStateFormatVersion);
    write_options(root.initOptions(), c.options_);
    const auto& h = c.history_;
    const auto points = static_cast<unsigned>(h.size());
    const auto channels = static_cast<unsigned>(h.channels());
    root.setChannels(channels);
    auto times = root.initHistoryTimes(points);
    auto values = root.initHistoryValues(points * channels);
    for (unsigned i = 0; i < points; ++i) {
      times.set(i, h.time(i));
      for (unsigned ch = 0; ch < channels; ++ch) values.set(i * channels + ch, h.values(i)[ch]);
    }
    auto plan = root.initPlan();
    plan.setAttempt(c.plan_.attempt);
    plan.setStep(c.plan_.step);
    plan.setRepeat(c.plan_.repeat);
    plan.setTBegin(c.plan_.t_begin);
    plan.setTEnd(c.plan_.t_end);
    plan.setKappa(c.plan_.kappa);
    plan.setEstimator(code(c.plan_.estimator));
    root.setConsecutiveFailures(c.n_fail_);
    root.setConsecutiveSuccesses(c.order_.successes());
    write_check(root.initOrderChangeCheck(), c.order_.change_check());
    root.setStartPhase(c.start_.active());
    root.setFinished(c.finished_);
    root.setEventLimit(c.event_limit_);
    root.setEventClippedStep(c.plan_.h_before_event);
    auto stats = root.initStatistics();
    stats.setAccepted(c.stats_.accepted);
    stats.setRejected(c.stats_.rejected);
    stats.setCorrectorFailures(c.stats_.corrector_failures);
    stats.setSubsystemFailures(c.stats_.subsystem_failures);
    auto by_kappa = stats.initAcceptedByKappa(static_cast<unsigned>(kMaxKappa + 1));
    for (unsigned k = 0; k < by_kappa.size(); ++k) by_kappa.set(k, c.stats_.accepted_by_kappa[k]);
    stats.setHMin(c.stats_.h_min);
    stats.setHMax(c.stats_.h_max);
  }

  // The accepted points in their order; CouplingHistory::push checks times and values.
  static void read_history(schema::ControllerState::Reader root, MacroStepController& c) {
    const auto times = root.getHistoryTimes();
    const auto values = root.getHistoryValues();
    const std::size_t channels = c.history_.channels();
    if (times.size() == 0 || times.size() > c.history_.capacity() ||
        values.size() != times.size() * channels) {
      malformed(fmt::format("{} history points with {} values (capacity {}, {} channels)",
                            times.size(), values.size(), c.history_.capacity(), channels));
    }
    std::vector<double> u(channels);
    for (unsigned i = 0; i < times.size(); ++i) {
      for (std::size_t ch = 0; ch < channels; ++ch) {
        u[ch] = values[static_cast<unsigned>(i * channels + ch)];
      }
      try {
        c.history_.push(times[i], u);
      } catch (const std::invalid_argument& e) {
        malformed(e.what());
      }
    }
  }

  static void read_plan(schema::StepPlan::Reader r, MacroStepController& c) {
    StepPlan& p = c.plan_;
    p.attempt = r.getAttempt();
    p.step = r.getStep();
    p.repeat = r.getRepeat();
    p.t_begin = r.getTBegin();
    p.t_end = r.getTEnd();
    p.kappa = r.getKappa();
    if (p.kappa < 0 || p.kappa > kMaxKappa) malformed(fmt::format("plan kappa {}", p.kappa));
    if (r.getEstimator() > code(Estimator::kImCV)) {
      malformed(fmt::format("plan estimator {}", r.getEstimator()));
    }
    p.estimator = static_cast<Estimator>(r.getEstimator());
  }

  static void read_statistics(schema::MacroStepStatistics::Reader r, MacroStepStatistics& s) {
    s.accepted = r.getAccepted();
    s.rejected = r.getRejected();
    s.corrector_failures = r.getCorrectorFailures();
    s.subsystem_failures = r.getSubsystemFailures();
    const auto by_kappa = r.getAcceptedByKappa();
    if (by_kappa.size() != s.accepted_by_kappa.size()) {
      malformed(fmt::format("order histogram of {} entries", by_kappa.size()));
    }
    for (unsigned k = 0; k < by_kappa.size(); ++k) s.accepted_by_kappa[k] = by_kappa[k];
    s.h_min = r.getHMin();
    s.h_max = r.getHMax();
  }

  // The invariants complete() and schedule() maintain: a plan starts at the newest point and
  // repeats N_fail times; the start-up phase runs only where the options allow it.
  static void check_consistency(const MacroStepController& c, bool start_allowed) {
    if (c.n_fail_ < 0 || c.order_.successes() < 0) malformed("negative N_fail or N_succ");
    if (c.start_.active() && !start_allowed) malformed("start-up phase the options do not have");
    if (c.finished_) return;
    const StepPlan& p = c.plan_;
    if (!same_bits(p.t_begin, c.history_.newest_time()) || !(p.t_end > p.t_begin) ||
        !(p.t_end <= c.options_.t_end) || p.repeat != c.n_fail_) {
      malformed("the plan does not continue from the newest history point");
    }
  }

  static MacroStepController read(schema::ControllerState::Reader root, MacroStepOptions options,
                                  std::size_t channels) {
    if (root.getFormatVersion() != kControllerStateFormatVersion) {
      mismatch(fmt::format("state format version {}, this build reads version {}",
                           root.getFormatVersion(), kControllerStateFormatVersion));
    }
    check_options(root.getOptions(), options);
    if (root.getChannels() != channels) {
      mismatch(fmt::format("state of {} coupling variables, this system has {}", root.getChannels(),
                           channels));
    }
    MacroStepController c(MacroStepController::ImportTag{}, std::move(options), channels);
    read_history(root, c);
    read_plan(root.getPlan(), c);
    c.n_fail_ = root.getConsecutiveFailures();
    c.order_.set_successes(root.getConsecutiveSuccesses());
    c.order_.set_change_check(read_check(root.getOrderChangeCheck()));
    const bool start_allowed = c.options_.mode == StepSizeMode::kVariable &&
                               c.options_.variable_start && c.options_.order.kappa_max > 0;
    c.start_ = VariableStartPhase(root.getStartPhase());
    c.finished_ = root.getFinished();
    c.event_limit_ = root.getEventLimit();
    c.plan_.h_before_event = root.getEventClippedStep();
    if (std::isnan(c.event_limit_) || !(c.plan_.h_before_event >= 0.0)) {
      malformed(
          fmt::format("event limit {} or clipped step {}", c.event_limit_, c.plan_.h_before_event));
    }
    read_statistics(root.getStatistics(), c.stats_);
    check_consistency(c, start_allowed);
    return c;
  }
};

std::vector<std::byte> MacroStepController::export_state() const {
  capnp::MallocMessageBuilder message;
  ControllerStateCodec::write(message.initRoot<schema::ControllerState>(), *this);
  return ipc::to_flat_bytes(message);
}

MacroStepController MacroStepController::import_state(MacroStepOptions options,
                                                      std::span<const std::byte> state,
                                                      std::size_t channels) {
  options.validate();
  if (state.empty() || state.size() % sizeof(capnp::word) != 0) {
    malformed(fmt::format("{} bytes is not a whole number of 8-byte words", state.size()));
  }
  // A copy: the caller's bytes need not be word-aligned.
  const std::vector<capnp::word> words = ipc::aligned_words(state);
  capnp::ReaderOptions limits;
  limits.traversalLimitInWords = std::max<std::uint64_t>(4 * words.size(), 8u << 20);
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()), limits);
    return ControllerStateCodec::read(reader.getRoot<schema::ControllerState>(), std::move(options),
                                      channels);
  } catch (const kj::Exception& e) {
    malformed(e.getDescription().cStr());
  }
}

}  // namespace macrostep::control
