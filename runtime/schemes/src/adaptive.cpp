// `scheme = "auto"` (adaptive.hpp; docs/design/methods.md §4.8).
#include "macrostep/schemes/adaptive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace macrostep::schemes {

using control::Estimator;

namespace {

// The estimator's form in the explicit and in the iterative schemes (exLE stays exLE in explicit
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

corrector::CorrectorOptions one_pass(corrector::CorrectorOptions o) {
  o.iteration = corrector::IterationKind::kSemiImplicit;
  return o;
}

// What a switch record says (its [3]); the kAgain kinds are retries (AdaptiveScheme::kRetryFactor).
enum EventKind {
  kProbePending = 0,
  kProbeKept = 1,
  kProbeBack = 2,
  kProbeFailed = 3,
  kAgainPending = 4,
  kAgainKept = 5,
  kAgainFailed = 6
};

// Indices into counts_: per mode at 4·index(mode), then the switches, the skipped probes and the
// escalated semi-implicit steps.
constexpr std::size_t kAttempts = 0, kAccepted = 1, kWork = 2, kTime = 3, kSwitches = 12,
                      kSkipped = 13, kEscalated = 14;
constexpr std::size_t kChoiceValues = 39;  // state[0]
constexpr std::size_t kSwitchValues = 6;

}  // namespace

int AdaptiveScheme::max_skips(double ratio) {
  // One more skip for every further factor kSkipFactor: floor(log_kSkipFactor(ratio /
  // kSkipFactor)) more than kMaxSkips, at most 1 000 more (an infinite ratio).
  const double more = std::floor(std::log(ratio / kSkipFactor) / std::log(kSkipFactor));
  return kMaxSkips + static_cast<int>(std::clamp(more, 0.0, 1000.0));
}

double AdaptiveScheme::Stretch::rate() const {
  double work = 0.0, time = 0.0;
  for (int k = 0; k < kWindow; ++k) {  // fixed order: the same sum in every executor; unused
                                       // entries are zero
    work += window_work[k];
    time += window_time[k];
  }
  return time > 0.0 ? work / time : 0.0;
}

AdaptiveScheme::AdaptiveScheme(corrector::CorrectorOptions corrector)
    : semi_(one_pass(corrector)), implicit_(corrector), tau_(corrector.tau) {
  if (corrector.iteration != corrector::IterationKind::kNewton) {
    throw std::invalid_argument("scheme auto: its corrector iterates implicitly");
  }
}

MacroStepScheme& AdaptiveScheme::scheme(Mode m) {
  return m == Mode::kExplicit       ? static_cast<MacroStepScheme&>(explicit_)
         : m == Mode::kSemiImplicit ? semi_
                                    : implicit_;
}

const MacroStepScheme& AdaptiveScheme::scheme(Mode m) const {
  return m == Mode::kExplicit       ? static_cast<const MacroStepScheme&>(explicit_)
         : m == Mode::kSemiImplicit ? semi_
                                    : implicit_;
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
  std::array<std::string, kModes> problem;
  for (const Mode m : {Mode::kExplicit, Mode::kSemiImplicit, Mode::kImplicit}) {
    try {
      scheme(m).start(system, m == Mode::kExplicit ? ex : im);
    } catch (const std::invalid_argument& e) {
      problem[index(m)] = e.what();
    }
    ok_[index(m)] = problem[index(m)].empty();
  }
  if (std::none_of(ok_.begin(), ok_.end(), [](bool b) { return b; })) {
    throw std::invalid_argument(
        fmt::format("scheme auto can run no scheme: explicit: {}; semi-implicit: {}; implicit: {}",
                    problem[0], problem[1], problem[2]));
  }
  only_reason_.clear();
  for (const Mode m : {Mode::kExplicit, Mode::kSemiImplicit, Mode::kImplicit}) {
    if (ok_[index(m)]) continue;
    if (!only_reason_.empty()) only_reason_ += "; ";
    only_reason_.append("no ").append(to_string(m)).append(" steps: ").append(problem[index(m)]);
  }
  mode_ = ok_[index(Mode::kExplicit)]   ? Mode::kExplicit
          : ok_[index(Mode::kImplicit)] ? Mode::kImplicit
                                        : Mode::kSemiImplicit;
  probing_ = false;
  left_mode_ = mode_;
  left_rate_ = 0.0;
  left_work_ = 0.0;
  allowance_ = 0.0;
  last_rate_ = {};
  failed_last_.reset();
  semi_mismatches_ = {};
  skipped_in_row_ = 0;
  stretch_ = {};
  counts_ = {};
  switches_.clear();
  last_h_ = {};
  last_step_kappa_ = {};
  failed_in_row_ = {};
  retry_rate_ = 0.0;
  retrying_ = false;
  resumption_.reset();
}

AttemptResult AdaptiveScheme::attempt(const control::StepPlan& plan,
                                      const polynomials::CouplingHistory& history,
                                      PassRunner& runner) {
  control::StepPlan p = plan;
  p.estimator =
      mode_ == Mode::kExplicit ? explicit_form(plan.estimator) : implicit_form(plan.estimator);
  last_t_begin_ = plan.t_begin;
  last_t_end_ = plan.t_end;
  last_kappa_ = plan.kappa;
  AttemptResult a = scheme(mode_).attempt(p, history, runner);
  last_mismatch_ = a.iteration_residual;
  escalated_ = mode_ == Mode::kSemiImplicit && ok_[index(Mode::kImplicit)] && !a.subsystem_failed &&
               !a.corrector_failed && a.iteration_residual > kEscalationLimit;
  if (escalated_) a = escalate(p, history, runner, a);
  a.estimator = p.estimator;
  last_work_ = runner.attempt_work();
  return a;
}

// The semi-implicit step's result is not taken: the implicit scheme repeats the step from T_N
// (Δ^0 from the perturbation floor, D-13, as after a switch), and its result, with the passes and
// Jacobians of both, is the attempt's. It stays a step of the semi-implicit stretch: its rate
// carries the repetition's work, so that where escalations are frequent the implicit steps
// measure cheaper and the cost rule moves to them.
AttemptResult AdaptiveScheme::escalate(const control::StepPlan& plan,
                                       const polynomials::CouplingHistory& history,
                                       PassRunner& runner, const AttemptResult& semi) {
  semi_.concluded(false);
  implicit_.import_state({{}});
  AttemptResult r = implicit_.attempt(plan, history, runner);
  r.corrector_passes += semi.corrector_passes + 1;  // + the semi-implicit step's two passes
  r.jacobian_evaluations += semi.jacobian_evaluations;
  r.semi_implicit = true;
  r.escalated_mismatch = semi.iteration_residual;
  counts_[kEscalated] += 1.0;
  return r;
}

void AdaptiveScheme::concluded(bool accepted) {
  resumption_.reset();
  if (escalated_) {
    implicit_.concluded(accepted);
  } else {
    scheme(mode_).concluded(accepted);
  }
  escalated_ = false;
  record(accepted);
  decide(accepted ? last_t_end_ : last_t_begin_);
}

void AdaptiveScheme::record(bool accepted) {
  const std::size_t b = 4 * index(mode_);
  counts_[b + kAttempts] += 1.0;
  counts_[b + kWork] += last_work_;
  stretch_.work += last_work_;
  stretch_.pending_work += last_work_;
  // Every attempt's mismatch: a rejected step is where the one pass may not have been enough.
  if (mode_ == Mode::kSemiImplicit) {
    semi_mismatches_[0] += 1.0;
    if (last_mismatch_ > tau_) semi_mismatches_[1] += 1.0;
  }
  if (!accepted) return;
  const double h = last_t_end_ - last_t_begin_;
  counts_[b + kAccepted] += 1.0;
  counts_[b + kTime] += h;
  last_h_[index(mode_)] = h;
  last_step_kappa_[index(mode_)] = last_kappa_;
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

// The schemes not running that can run the system, in the order in which a probe tries them: by
// their last rate (one never measured, at 0, first), ties in the order semi-implicit, implicit,
// explicit; the one whose probe failed last goes last.
std::vector<AdaptiveScheme::Mode> AdaptiveScheme::candidates() const {
  std::vector<Mode> order;
  // Implicit steps: where semi-implicit ones cannot run, until measured once, where they were
  // measured cheaper than semi-implicit ones, or where the one corrector pass of semi-implicit
  // ones leaves enough mismatch.
  const double implicit_rate = last_rate_[index(Mode::kImplicit)];
  const bool implicit_pays =
      !ok_[index(Mode::kSemiImplicit)] || implicit_rate == 0.0 ||
      implicit_rate < last_rate_[index(Mode::kSemiImplicit)] ||
      (semi_mismatches_[0] > 0.0 && kMismatchShare * semi_mismatches_[1] >= semi_mismatches_[0]);
  for (const Mode m : {Mode::kSemiImplicit, Mode::kImplicit, Mode::kExplicit}) {
    if (m != mode_ && ok_[index(m)] && (m != Mode::kImplicit || implicit_pays)) {
      order.push_back(m);
    }
  }
  const auto failed_last = [this](Mode m) { return failed_last_ && *failed_last_ == m; };
  std::stable_sort(order.begin(), order.end(), [&](Mode a, Mode b) {
    if (failed_last(a) != failed_last(b)) return failed_last(b);
    return last_rate_[index(a)] < last_rate_[index(b)];
  });
  return order;
}

// After a conclusion: end a probe whose rate is measured (judge_probe), or start one once the
// stretch has spent its allowance.
void AdaptiveScheme::decide(double t_next) {
  if (!stretch_.measured()) return;
  const double rate = stretch_.rate();
  last_rate_[index(mode_)] = stretch_.long_rate();
  if (probing_) {
    judge_probe(t_next, rate);
    return;
  }
  if (stretch_.window_count >= stretch_.settled_at) {  // a full window since the last comparison
    stretch_.falling = stretch_.settled_rate == 0.0 || rate < kFallFactor * stretch_.settled_rate;
    stretch_.settled_rate = rate;
    stretch_.settled_at = stretch_.window_count + kWindow;
  }
  // Right after going back from a failed probe: the returned scheme's first two windows (its
  // rate no longer falling) against the probe's rate, once.
  if (retry_rate_ > 0.0 && stretch_.window_count >= 2 * kWindow) {
    const double probe_rate = retry_rate_;
    retry_rate_ = 0.0;
    if (!stretch_.falling && stretch_.long_rate() > kRetryFactor * probe_rate && failed_last_) {
      left_work_ = stretch_.work;
      switch_to(*failed_last_, Why::kProbe, t_next, stretch_.long_rate(), 0.0);
      retrying_ = true;
      switches_.back()[3] = kAgainPending;
      switches_.back()[5] = probe_rate;
      return;
    }
  }
  const std::vector<Mode> order = candidates();
  if (order.empty()) return;  // a system only one scheme can run
  const bool first = counts_[kSwitches] == 0.0;
  if (stretch_.falling || (first ? stretch_.accepted < static_cast<std::uint64_t>(kFirstProbe)
                                 : stretch_.work < allowance_)) {
    return;
  }
  // The first in that order cost kSkipFactor times as much when it last ran (and the others, if
  // not passed over, more): probing it now would likely fail (a system at rest would even make
  // unstable explicit steps look cheap for a while). Skipped: the allowance doubles. Not more
  // than max_skips() times in a row: its rate may be one of a transient (the start-up's short
  // steps), and the rule would never measure it again.
  const Mode other = order.front();
  const double ratio = last_rate_[index(other)] / rate;
  if (ratio > kSkipFactor && skipped_in_row_ < max_skips(ratio)) {
    ++skipped_in_row_;
    allowance_ *= 2.0;
    counts_[kSkipped] += 1.0;
    return;
  }
  skipped_in_row_ = 0;
  left_work_ = stretch_.work;
  switch_to(other, Why::kProbe, t_next, stretch_.long_rate(), 0.0);
}

// A probe whose rate (over its window) is measured: kept, judged again one window later, or
// ended by going back to the scheme it left.
void AdaptiveScheme::judge_probe(double t_next, double rate) {
  const double probe_work = stretch_.work;
  // What the probe cost beyond what the left scheme would have spent on the same simulated time:
  // the next probe waits for kAllowance times that (a probe that cost about as much as the left
  // scheme is tried again soon).
  const double extra = std::max(probe_work - left_rate_ * stretch_.time, kMinExtra * probe_work);
  if (rate * kKeepMargin <= left_rate_) {
    probing_ = false;
    failed_in_row_[index(mode_)] = 0.0;
    allowance_ = kAllowance * probe_work;
    if (!switches_.empty()) {
      switches_.back()[3] = retrying_ ? kAgainKept : kProbeKept;
      switches_.back()[5] = rate;
    }
    retrying_ = false;
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
    switches_.back()[3] = retrying_ ? kAgainFailed : kProbeFailed;
    switches_.back()[5] = rate;
  }
  failed_last_ = mode_;
  retry_rate_ = retrying_ ? 0.0 : rate;  // a retry that fails is not retried
  retrying_ = false;
  const double backoff = std::exp2(std::min<double>(failed_in_row_[index(mode_)], kMaxBackoff));
  failed_in_row_[index(mode_)] += 1.0;
  switch_to(left_mode_, Why::kBack, t_next, left_rate_, rate);
  allowance_ = kAllowance * extra * backoff;
}

void AdaptiveScheme::switch_to(Mode mode, Why why, double t_next, double rate_left,
                               double rate_now) {
  if (mode != Mode::kExplicit) {
    // Δ^0 of the first corrector step from the perturbation floor (D-13), not from a
    // correction of many steps ago.
    scheme(mode).import_state({{}});
  }
  const Mode from = mode_;
  mode_ = mode;
  if (last_h_[index(mode)] > 0.0) {
    const double h = mode == Mode::kExplicit
                         ? std::min(last_h_[index(mode)], last_t_end_ - last_t_begin_)
                         : last_h_[index(mode)];
    resumption_ = StepResumption{h, last_step_kappa_[index(mode)]};
  }
  if (mode == Mode::kSemiImplicit) semi_mismatches_ = {};
  probing_ = why == Why::kProbe;
  if (probing_) {
    left_mode_ = from;
    left_rate_ = rate_left;
  }
  stretch_ = {};
  counts_[kSwitches] += 1.0;
  switches_.push_back({t_next, static_cast<double>(index(from)), static_cast<double>(index(mode)),
                       static_cast<double>(probing_ ? kProbePending : kProbeBack), rate_left,
                       probing_ ? 0.0 : rate_now});
  if (switches_.size() > SchemeChoiceStatistics::kRecentSwitches) {
    switches_.erase(switches_.begin());
  }
}

std::vector<std::vector<double>> AdaptiveScheme::export_state() const {
  std::array<std::vector<std::vector<double>>, kModes> sub;
  for (const Mode m : {Mode::kExplicit, Mode::kSemiImplicit, Mode::kImplicit}) {
    if (ok_[index(m)]) sub[index(m)] = scheme(m).export_state();
  }
  std::vector<std::vector<double>> out;
  const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  out.push_back({kStateLayout,
                 d(index(mode_)),
                 probing_ ? 1.0 : 0.0,
                 d(index(left_mode_)),
                 left_rate_,
                 left_work_,
                 allowance_,
                 static_cast<double>(skipped_in_row_),
                 last_rate_[0],
                 last_rate_[1],
                 last_rate_[2],
                 d(stretch_.accepted),
                 stretch_.work,
                 stretch_.time,
                 stretch_.pending_work,
                 d(stretch_.window_count),
                 stretch_.measured_work,
                 stretch_.measured_time,
                 d(stretch_.judged_at),
                 stretch_.judged_rate,
                 d(sub[0].size()),
                 d(sub[1].size()),
                 failed_last_ ? d(index(*failed_last_)) : -1.0,
                 d(stretch_.settled_at),
                 stretch_.settled_rate,
                 stretch_.falling ? 1.0 : 0.0,
                 semi_mismatches_[0],
                 semi_mismatches_[1],
                 last_h_[0],
                 last_h_[1],
                 last_h_[2],
                 static_cast<double>(last_step_kappa_[0]),
                 static_cast<double>(last_step_kappa_[1]),
                 static_cast<double>(last_step_kappa_[2]),
                 failed_in_row_[0],
                 failed_in_row_[1],
                 failed_in_row_[2],
                 retry_rate_,
                 retrying_ ? 1.0 : 0.0});
  out.emplace_back(stretch_.window_work.begin(), stretch_.window_work.end());
  out.emplace_back(stretch_.window_time.begin(), stretch_.window_time.end());
  out.emplace_back(counts_.begin(), counts_.end());
  std::vector<double> sw;
  for (const auto& s : switches_) sw.insert(sw.end(), s.begin(), s.end());
  out.push_back(std::move(sw));
  for (const auto& s : sub) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// state[0] of export_state, checked by import_state.
void AdaptiveScheme::import_choice(const std::vector<double>& c) {
  mode_ = static_cast<Mode>(c[1]);
  probing_ = c[2] != 0.0;
  left_mode_ = static_cast<Mode>(c[3]);
  left_rate_ = c[4];
  left_work_ = c[5];
  allowance_ = c[6];
  skipped_in_row_ = static_cast<int>(c[7]);
  last_rate_ = {c[8], c[9], c[10]};
  stretch_.accepted = static_cast<std::uint64_t>(c[11]);
  stretch_.work = c[12];
  stretch_.time = c[13];
  stretch_.pending_work = c[14];
  stretch_.window_count = static_cast<std::uint64_t>(c[15]);
  stretch_.measured_work = c[16];
  stretch_.measured_time = c[17];
  stretch_.judged_at = static_cast<std::uint64_t>(c[18]);
  stretch_.judged_rate = c[19];
  failed_last_.reset();
  if (c[22] >= 0.0) failed_last_ = static_cast<Mode>(c[22]);
  stretch_.settled_at = static_cast<std::uint64_t>(c[23]);
  stretch_.settled_rate = c[24];
  stretch_.falling = c[25] != 0.0;
  semi_mismatches_ = {c[26], c[27]};
  last_h_ = {c[28], c[29], c[30]};
  last_step_kappa_ = {static_cast<int>(c[31]), static_cast<int>(c[32]), static_cast<int>(c[33])};
  failed_in_row_ = {c[34], c[35], c[36]};
  retry_rate_ = c[37];
  retrying_ = c[38] != 0.0;
}

namespace {

// The last H (≥ 0, finite) and κ (0..kMaxKappa) per scheme in state[0], the failed probes in a
// row and the retry's values.
bool last_steps_fit(const std::vector<double>& c) {
  for (std::size_t k = 28; k < 31; ++k) {
    if (!std::isfinite(c[k]) || c[k] < 0.0) return false;
  }
  for (std::size_t k = 31; k < 34; ++k) {
    if (!(c[k] >= 0.0 && c[k] <= control::kMaxKappa) || c[k] != std::floor(c[k])) return false;
  }
  for (std::size_t k = 34; k < 37; ++k) {  // failed probes in a row
    if (!(c[k] >= 0.0 && c[k] < 1e15) || c[k] != std::floor(c[k])) return false;
  }
  // The rate of a probe that may be retried, and whether the current probe is a retry.
  return std::isfinite(c[37]) && c[37] >= 0.0 && (c[38] == 0.0 || c[38] == 1.0);
}

}  // namespace

void AdaptiveScheme::import_state(const std::vector<std::vector<double>>& state) {
  const auto bad = [](const char* what) {
    return std::invalid_argument(std::string("scheme auto state: ") + what);
  };
  if (state.size() < 5 || state[0].size() != kChoiceValues || state[0][0] != kStateLayout ||
      state[1].size() != kWindow || state[2].size() != kWindow ||
      state[3].size() != counts_.size() || state[4].size() % kSwitchValues != 0) {
    throw bad("the arrays do not fit this scheme (another layout, or damaged)");
  }
  const auto& c = state[0];
  const auto mode_fits = [this](double v) {
    return (v == 0.0 || v == 1.0 || v == 2.0) && ok_[static_cast<std::size_t>(v)];
  };
  const auto ex_n = static_cast<std::size_t>(c[20]), semi_n = static_cast<std::size_t>(c[21]);
  const std::size_t im_n = state.size() >= 5 + ex_n + semi_n ? state.size() - 5 - ex_n - semi_n : 0;
  if (state.size() < 5 + ex_n + semi_n || !mode_fits(c[1]) || !mode_fits(c[3]) ||
      (c[22] != -1.0 && !mode_fits(c[22])) || !last_steps_fit(c) || (!ok_[0] && ex_n != 0) ||
      (!ok_[1] && semi_n != 0) || (!ok_[2] && im_n != 0)) {
    throw bad("the arrays do not fit this system");
  }
  const auto first = state.begin() + 5;
  if (ok_[0]) explicit_.import_state({first, first + static_cast<std::ptrdiff_t>(ex_n)});
  if (ok_[1]) {
    semi_.import_state({first + static_cast<std::ptrdiff_t>(ex_n),
                        first + static_cast<std::ptrdiff_t>(ex_n + semi_n)});
  }
  if (ok_[2])
    implicit_.import_state({first + static_cast<std::ptrdiff_t>(ex_n + semi_n), state.end()});
  import_choice(c);
  std::copy(state[1].begin(), state[1].end(), stretch_.window_work.begin());
  std::copy(state[2].begin(), state[2].end(), stretch_.window_time.begin());
  std::copy(state[3].begin(), state[3].end(), counts_.begin());
  switches_.clear();
  for (std::size_t k = 0; k < state[4].size(); k += kSwitchValues) {
    std::array<double, kSwitchValues> s{};
    std::copy_n(state[4].begin() + static_cast<std::ptrdiff_t>(k), kSwitchValues, s.begin());
    switches_.push_back(s);
  }
}

namespace {

// Why a switch happened, in words (add_statistics).
std::string switch_reason(const std::array<double, kSwitchValues>& e) {
  const char* from = to_string(static_cast<StepKind>(e[1]));
  const char* to = to_string(static_cast<StepKind>(e[2]));
  const int kind = static_cast<int>(e[3]);
  // A retry's kept and failed records read as a probe's, with "again".
  switch (kind) {
    case kAgainPending:
      return fmt::format(
          "probe of {} steps again: the {} steps gone back to cost work {:.3g} per simulated "
          "second, over {} times the probe's {:.3g}; not yet measured",
          to, from, e[4], AdaptiveScheme::kRetryFactor, e[5]);
    case kProbePending:
      return fmt::format(
          "probe of {} steps ({} steps cost work {:.3g} per simulated second); not yet measured",
          to, from, e[4]);
    case kProbeKept:
    case kAgainKept:
      return fmt::format(
          "probe of {} steps{} kept: work {:.3g} per simulated second against {:.3g} in {} steps",
          to, kind == kAgainKept ? " again," : "", e[5], e[4], from);
    case kProbeFailed:
    case kAgainFailed:
      return fmt::format(
          "probe of {} steps{}: work {:.3g} per simulated second against {:.3g} in {} steps", to,
          kind == kAgainFailed ? " again" : "", e[5], e[4], from);
    default:
      return fmt::format(
          "back to {} steps: the probe of {} steps cost work {:.3g} per simulated second against "
          "{:.3g}",
          to, from, e[5], e[4]);
  }
}

}  // namespace

void AdaptiveScheme::add_statistics(SchemeResult& result) const {
  SchemeChoiceStatistics& s = result.scheme_choice;
  s.used = true;
  const auto fill = [&](SchemeChoiceStatistics::PerScheme& p, Mode m) {
    const std::size_t b = 4 * index(m);
    p.attempts = static_cast<std::uint64_t>(counts_[b + kAttempts]);
    p.accepted = static_cast<std::uint64_t>(counts_[b + kAccepted]);
    p.work = counts_[b + kWork];
    p.time = counts_[b + kTime];
  };
  fill(s.explicit_steps, Mode::kExplicit);
  fill(s.semi_implicit_steps, Mode::kSemiImplicit);
  fill(s.implicit_steps, Mode::kImplicit);
  s.switches = static_cast<std::uint64_t>(counts_[kSwitches]);
  s.skipped_probes = static_cast<std::uint64_t>(counts_[kSkipped]);
  s.escalated = static_cast<std::uint64_t>(counts_[kEscalated]);
  s.only_reason = only_reason_;
  s.recent.clear();
  for (const auto& e : switches_) {
    s.recent.push_back(
        {e[0], static_cast<StepKind>(e[1]), static_cast<StepKind>(e[2]), switch_reason(e)});
  }
}

}  // namespace macrostep::schemes
