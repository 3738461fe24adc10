// `scheme = "auto"` (adaptive.hpp; docs/design/methods.md §4.8).
#include "macrostep/schemes/adaptive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace macrostep::schemes {

using control::Estimator;

namespace {

// The estimator's form in the explicit and in the implicit scheme (exLE stays exLE in explicit
// steps; imMD is its implicit form: both estimate the error of the states).
Estimator explicit_form(Estimator e) {
  if (e == Estimator::kImMD) return Estimator::kExMD;
  if (e == Estimator::kImCV) return Estimator::kExCV;
  return e;
}

Estimator implicit_form(Estimator e) {
  if (e == Estimator::kExMD || e == Estimator::kExLE) return Estimator::kImMD;
  if (e == Estimator::kExCV) return Estimator::kImCV;
  return e;
}

enum EventKind { kProbePending = 0, kProbeKept = 1, kProbeBack = 2, kProbeFailed = 3 };

// Indices into counts_.
constexpr std::size_t kAttempts = 0, kAccepted = 1, kWork = 2, kTime = 3, kSwitches = 8,
                      kSkipped = 9;
std::size_t base(bool implicit) {
  return implicit ? 4 : 0;
}

}  // namespace

double AdaptiveScheme::Stretch::rate() const {
  double work = 0.0, time = 0.0;
  for (int k = 0; k < kWindow; ++k) {  // fixed order: the same sum in every executor; unused
                                       // entries are zero
    work += window_work[k];
    time += window_time[k];
  }
  return time > 0.0 ? work / time : 0.0;
}

AdaptiveScheme::AdaptiveScheme(corrector::CorrectorOptions corrector) : implicit_(corrector) {
  if (corrector.iteration != corrector::IterationKind::kNewton) {
    throw std::invalid_argument("scheme auto: its corrector iterates implicitly");
  }
}

MacroStepScheme& AdaptiveScheme::active() {
  return mode_ == Mode::kExplicit ? static_cast<MacroStepScheme&>(explicit_) : implicit_;
}

const MacroStepScheme& AdaptiveScheme::active() const {
  return mode_ == Mode::kExplicit ? static_cast<const MacroStepScheme&>(explicit_) : implicit_;
}

void AdaptiveScheme::start(const system::CoupledSystem& system, const SchemeOptions& options) {
  if (!options.approximations.empty()) {
    throw std::invalid_argument(
        "scheme auto takes the Lagrange approximation only (cosim.approximation applies to the "
        "explicit scheme)");
  }
  if (options.control.mode != control::StepSizeMode::kVariable) {
    throw std::invalid_argument(
        "scheme auto chooses from controlled steps: it needs an estimator, not a fixed step size");
  }
  SchemeOptions ex = options, im = options;
  ex.corrector.reset();
  ex.adaptive = false;
  ex.control.estimator = explicit_form(options.control.estimator);
  im.adaptive = false;
  im.control.estimator = implicit_form(options.control.estimator);
  std::string explicit_problem, implicit_problem;
  try {
    explicit_.start(system, ex);
  } catch (const std::invalid_argument& e) {
    explicit_problem = e.what();
  }
  try {
    implicit_.start(system, im);
  } catch (const std::invalid_argument& e) {
    implicit_problem = e.what();
  }
  explicit_ok_ = explicit_problem.empty();
  implicit_ok_ = implicit_problem.empty();
  if (!explicit_ok_ && !implicit_ok_) {
    throw std::invalid_argument(
        fmt::format("scheme auto can run neither scheme: explicit: {}; "
                    "implicit: {}",
                    explicit_problem, implicit_problem));
  }
  only_reason_ = !explicit_ok_   ? "implicit only: " + explicit_problem
                 : !implicit_ok_ ? "explicit only: " + implicit_problem
                                 : "";
  mode_ = explicit_ok_ ? Mode::kExplicit : Mode::kImplicit;
  probing_ = false;
  left_rate_ = 0.0;
  left_work_ = 0.0;
  allowance_ = 0.0;
  last_rate_ = {0.0, 0.0};
  skipped_in_row_ = 0;
  stretch_ = {};
  counts_ = {};
  switches_.clear();
}

AttemptResult AdaptiveScheme::attempt(const control::StepPlan& plan,
                                      const polynomials::CouplingHistory& history,
                                      PassRunner& runner) {
  control::StepPlan p = plan;
  p.estimator =
      mode_ == Mode::kExplicit ? explicit_form(plan.estimator) : implicit_form(plan.estimator);
  AttemptResult a = active().attempt(p, history, runner);
  last_work_ = runner.attempt_work();
  last_t_begin_ = plan.t_begin;
  last_t_end_ = plan.t_end;
  return a;
}

void AdaptiveScheme::concluded(bool accepted) {
  active().concluded(accepted);
  record(accepted);
  if (explicit_ok_ && implicit_ok_) decide(accepted ? last_t_end_ : last_t_begin_);
}

void AdaptiveScheme::record(bool accepted) {
  const std::size_t b = base(mode_ == Mode::kImplicit);
  counts_[b + kAttempts] += 1.0;
  counts_[b + kWork] += last_work_;
  stretch_.work += last_work_;
  stretch_.pending_work += last_work_;
  if (!accepted) return;
  const double h = last_t_end_ - last_t_begin_;
  counts_[b + kAccepted] += 1.0;
  counts_[b + kTime] += h;
  stretch_.time += h;
  ++stretch_.accepted;
  if (stretch_.accepted > static_cast<std::uint64_t>(kWarmup)) {
    const std::size_t k = stretch_.window_count % kWindow;
    stretch_.window_work[k] = stretch_.pending_work;
    stretch_.window_time[k] = h;
    ++stretch_.window_count;
    stretch_.measured_work += stretch_.pending_work;
    stretch_.measured_time += h;
  }
  stretch_.pending_work = 0.0;
}

// After a conclusion: end a probe whose rate is measured (keep it or go back), or start one
// once the stretch has spent its allowance.
void AdaptiveScheme::decide(double t_next) {
  if (!stretch_.measured()) return;
  const double rate = stretch_.rate();
  last_rate_[mode_ == Mode::kImplicit ? 1 : 0] = stretch_.long_rate();
  if (probing_) {
    const Mode left = mode_ == Mode::kExplicit ? Mode::kImplicit : Mode::kExplicit;
    const double probe_work = stretch_.work;
    // What the probe cost beyond what the left scheme would have spent on the same simulated
    // time: the next probe waits for kAllowance times that (a probe that cost about as much as
    // the left scheme is tried again soon).
    const double extra = std::max(probe_work - left_rate_ * stretch_.time, kMinExtra * probe_work);
    if (rate * kKeepMargin <= left_rate_) {
      probing_ = false;
      allowance_ = kAllowance * probe_work;
      if (!switches_.empty()) {
        switches_.back()[2] = kProbeKept;
        switches_.back()[4] = rate;
      }
      return;
    }
    // Still getting cheaper (its H grows after the switch): judged again one window later, while
    // its extra work stays within the allowance of the stretch it interrupted.
    const int extensions = static_cast<int>(stretch_.judged_at / kWindow) - 1;
    if (extensions < kMaxExtensions &&
        probe_work - left_rate_ * stretch_.time <= left_work_ / kAllowance &&
        (stretch_.judged_rate == 0.0 || rate < kFallFactor * stretch_.judged_rate)) {
      stretch_.judged_rate = rate;
      stretch_.judged_at += kWindow;
      return;
    }
    if (!switches_.empty()) {
      switches_.back()[2] = kProbeFailed;
      switches_.back()[4] = rate;
    }
    switch_to(left, Why::kBack, t_next, left_rate_, rate);
    allowance_ = kAllowance * extra;
    return;
  }
  const bool first = counts_[kSwitches] == 0.0;
  if (first ? stretch_.accepted < static_cast<std::uint64_t>(kFirstProbe)
            : stretch_.work < allowance_) {
    return;
  }
  const Mode other = mode_ == Mode::kExplicit ? Mode::kImplicit : Mode::kExplicit;
  // The other scheme cost kSkipFactor times as much when it last ran: probing it now would
  // likely fail (a system at rest would even make unstable explicit steps look cheap for a
  // while). Skipped: the allowance doubles, and the next one is tried.
  if (const double known = last_rate_[other == Mode::kImplicit ? 1 : 0];
      known > kSkipFactor * rate && skipped_in_row_ < kMaxSkips) {
    ++skipped_in_row_;
    allowance_ *= 2.0;
    counts_[kSkipped] += 1.0;
    return;
  }
  skipped_in_row_ = 0;
  left_work_ = stretch_.work;
  switch_to(other, Why::kProbe, t_next, stretch_.long_rate(), 0.0);
}

void AdaptiveScheme::switch_to(Mode mode, Why why, double t_next, double rate_left,
                               double rate_now) {
  if (mode == Mode::kImplicit) {
    // Δ^0 of the first corrector step from the perturbation floor (D-13), not from a
    // correction of many steps ago.
    implicit_.import_state({{}});
  }
  mode_ = mode;
  probing_ = why == Why::kProbe;
  if (probing_) left_rate_ = rate_left;
  stretch_ = {};
  counts_[kSwitches] += 1.0;
  if (why == Why::kProbe) {
    switches_.push_back({t_next, mode == Mode::kImplicit ? 1.0 : 0.0,
                         static_cast<double>(kProbePending), rate_left, 0.0});
  } else {
    switches_.push_back({t_next, mode == Mode::kImplicit ? 1.0 : 0.0,
                         static_cast<double>(kProbeBack), rate_left, rate_now});
  }
  if (switches_.size() > SchemeChoiceStatistics::kRecentSwitches) {
    switches_.erase(switches_.begin());
  }
}

std::vector<std::vector<double>> AdaptiveScheme::export_state() const {
  const auto ex = explicit_ok_ ? explicit_.export_state() : std::vector<std::vector<double>>{};
  const auto im = implicit_ok_ ? implicit_.export_state() : std::vector<std::vector<double>>{};
  std::vector<std::vector<double>> out;
  out.push_back({mode_ == Mode::kImplicit ? 1.0 : 0.0, probing_ ? 1.0 : 0.0, left_rate_, allowance_,
                 static_cast<double>(stretch_.accepted), stretch_.work, stretch_.pending_work,
                 static_cast<double>(stretch_.window_count), static_cast<double>(ex.size()),
                 static_cast<double>(im.size()), last_rate_[0], last_rate_[1],
                 static_cast<double>(skipped_in_row_), stretch_.measured_work,
                 stretch_.measured_time, static_cast<double>(stretch_.judged_at),
                 stretch_.judged_rate, stretch_.time, left_work_});
  out.emplace_back(stretch_.window_work.begin(), stretch_.window_work.end());
  out.emplace_back(stretch_.window_time.begin(), stretch_.window_time.end());
  out.emplace_back(counts_.begin(), counts_.end());
  std::vector<double> sw;
  for (const auto& s : switches_) sw.insert(sw.end(), s.begin(), s.end());
  out.push_back(std::move(sw));
  out.insert(out.end(), ex.begin(), ex.end());
  out.insert(out.end(), im.begin(), im.end());
  return out;
}

void AdaptiveScheme::import_state(const std::vector<std::vector<double>>& state) {
  const auto bad = [](const char* what) {
    return std::invalid_argument(std::string("scheme auto state: ") + what);
  };
  if (state.size() < 5 || state[0].size() != 19 || state[1].size() != kWindow ||
      state[2].size() != kWindow || state[3].size() != counts_.size() || state[4].size() % 5 != 0) {
    throw bad("the arrays do not fit this scheme");
  }
  const auto& c = state[0];
  const auto ex_n = static_cast<std::size_t>(c[8]), im_n = static_cast<std::size_t>(c[9]);
  if (state.size() != 5 + ex_n + im_n || (c[0] != 0.0 && c[0] != 1.0) ||
      (c[0] == 1.0 ? !implicit_ok_ : !explicit_ok_)) {
    throw bad("the arrays do not fit this system");
  }
  if (explicit_ok_) explicit_.import_state({state.begin() + 5, state.begin() + 5 + ex_n});
  if (implicit_ok_) implicit_.import_state({state.begin() + 5 + ex_n, state.end()});
  mode_ = c[0] == 1.0 ? Mode::kImplicit : Mode::kExplicit;
  probing_ = c[1] != 0.0;
  left_rate_ = c[2];
  allowance_ = c[3];
  stretch_.accepted = static_cast<std::uint64_t>(c[4]);
  stretch_.work = c[5];
  stretch_.pending_work = c[6];
  stretch_.window_count = static_cast<std::uint64_t>(c[7]);
  last_rate_ = {c[10], c[11]};
  skipped_in_row_ = static_cast<int>(c[12]);
  stretch_.measured_work = c[13];
  stretch_.measured_time = c[14];
  stretch_.judged_at = static_cast<std::uint64_t>(c[15]);
  stretch_.judged_rate = c[16];
  stretch_.time = c[17];
  left_work_ = c[18];
  std::copy(state[1].begin(), state[1].end(), stretch_.window_work.begin());
  std::copy(state[2].begin(), state[2].end(), stretch_.window_time.begin());
  std::copy(state[3].begin(), state[3].end(), counts_.begin());
  switches_.clear();
  for (std::size_t k = 0; k < state[4].size(); k += 5) {
    switches_.push_back(
        {state[4][k], state[4][k + 1], state[4][k + 2], state[4][k + 3], state[4][k + 4]});
  }
}

void AdaptiveScheme::add_statistics(SchemeResult& result) const {
  SchemeChoiceStatistics& s = result.scheme_choice;
  s.used = true;
  const auto fill = [&](SchemeChoiceStatistics::PerScheme& p, bool implicit) {
    const std::size_t b = base(implicit);
    p.attempts = static_cast<std::uint64_t>(counts_[b + kAttempts]);
    p.accepted = static_cast<std::uint64_t>(counts_[b + kAccepted]);
    p.work = counts_[b + kWork];
    p.time = counts_[b + kTime];
  };
  fill(s.explicit_steps, false);
  fill(s.implicit_steps, true);
  s.switches = static_cast<std::uint64_t>(counts_[kSwitches]);
  s.skipped_probes = static_cast<std::uint64_t>(counts_[kSkipped]);
  s.only_reason = only_reason_;
  s.recent.clear();
  for (const auto& e : switches_) {
    const bool to_implicit = e[1] == 1.0;
    const char* to = to_implicit ? "implicit" : "explicit";
    const char* from = to_implicit ? "explicit" : "implicit";
    std::string reason;
    switch (static_cast<int>(e[2])) {
      case kProbePending:
        reason = fmt::format(
            "probe of {} steps ({} steps cost {:.3g} solver calls per "
            "simulated second); not yet measured",
            to, from, e[3]);
        break;
      case kProbeKept:
        reason = fmt::format(
            "probe of {} steps kept: {:.3g} solver calls per simulated second "
            "against {:.3g} in {} steps",
            to, e[4], e[3], from);
        break;
      case kProbeFailed:
        reason = fmt::format(
            "probe of {} steps: {:.3g} solver calls per simulated second "
            "against {:.3g} in {} steps",
            to, e[4], e[3], from);
        break;
      default:
        reason = fmt::format(
            "back to {} steps: the probe cost {:.3g} solver calls per simulated "
            "second against {:.3g}",
            to, e[4], e[3]);
        break;
    }
    s.recent.push_back({e[0], to_implicit, std::move(reason)});
  }
}

}  // namespace macrostep::schemes
