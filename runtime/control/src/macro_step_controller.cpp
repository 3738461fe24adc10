#include "macrostep/control/macro_step_controller.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace macrostep::control {

void MacroStepOptions::validate() const {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("macro-step options: " + what);
  };
  if (!std::isfinite(t_start) || !std::isfinite(t_end) || !(t_end > t_start)) {
    fail("t_end must be finite and after t_start");
  }
  if (!(h > 0.0) || !std::isfinite(h)) {
    fail(mode == StepSizeMode::kFixed ? "the fixed step size H must be > 0"
                                      : "the initial step size H_init must be > 0");
  }
  if (h < StepSizeController::min_step(t_start))
    fail("H is below H_min (1e-14*max(1,|T_0|), 1e-22 s near 0)");
  if (mode == StepSizeMode::kVariable && estimator == Estimator::kNone) {
    fail("variable step sizes need an error estimator (exLE, exMD, exCV, imMD, imCV)");
  }
  if (kappa_fixed < 0 || kappa_fixed > kMaxKappa) {
    fail("kappa_fixed " + std::to_string(kappa_fixed) + " outside 0.." + std::to_string(kMaxKappa));
  }
  const std::size_t needed = static_cast<std::size_t>(
      mode == StepSizeMode::kFixed ? kappa_fixed + 2 : order.kappa_max + 3);
  if (history_capacity < needed) {
    fail("history_capacity " + std::to_string(history_capacity) + " below the " +
         std::to_string(needed) + " points the degree needs");
  }
  order.validate();
  step.validate();
  tolerances.validate();
}

MacroStepController::MacroStepController(MacroStepOptions options, std::span<const double> u0)
    : options_((options.validate(), std::move(options))),
      history_(u0.size(), options_.history_capacity),
      order_(options_.order),
      step_(options_.step),
      start_(options_.mode == StepSizeMode::kVariable && options_.variable_start &&
             options_.order.kappa_max > 0) {
  history_.push(options_.t_start, u0);
  const double t0 = options_.t_start;
  double t_next;
  if (options_.mode == StepSizeMode::kFixed) {
    t_next = options_.fixed_start_ramp ? fixed_step_ramp_end(t0, options_.h, 0, t0)
                                       : fixed_step_grid_end(t0, options_.h, t0);
  } else {
    t_next = t0 + std::min(options_.h, options_.step.h_max);
  }
  plan_.attempt = 0;
  plan_.step = 0;
  schedule(clip(t0, t_next), 0);
}

MacroStepController::MacroStepController(ImportTag, MacroStepOptions options, std::size_t channels)
    : options_((options.validate(), std::move(options))),
      history_(channels, options_.history_capacity),
      order_(options_.order),
      step_(options_.step),
      start_(false) {}

const StepPlan& MacroStepController::plan() const {
  if (finished_) throw std::logic_error("MacroStepController::plan: the run has finished");
  return plan_;
}

double MacroStepController::clip(double t_m, double t_next) const {
  const double snap = std::max(StepSizeController::min_step(t_m), 1e-8 * (t_next - t_m));
  return t_next >= options_.t_end - snap ? options_.t_end : t_next;
}

// A time event within 1e-14·max(1, |T_M|) of T_M (H_min away from t0) is one the subsystems
// take with the step that ends at T_M, or at the start of their next one (ida::Integrator's
// event tolerance); one at or beyond t_end does not shorten the run's last step.
double MacroStepController::clip_to_event(double t_m, double t_next, double* h_before) const {
  *h_before = 0.0;
  const double te = event_limit_;
  const double merged =
      std::max(StepSizeController::min_step(t_m), 1e-14 * std::max(1.0, std::abs(t_m)));
  if (!(te > t_m + merged) || !(te < options_.t_end)) return t_next;
  const double snap = std::max(StepSizeController::min_step(t_m), 1e-8 * (t_next - t_m));
  if (t_next < te - snap) return t_next;
  *h_before = t_next - t_m;
  return te;
}

// A polynomial through points far closer together than H amplifies their differences over H
// (scheme auto on the demo: κ = 5 through explicit steps' points 2e-8 s apart, extrapolated over
// 1.85e-6 s, passed the error test and diverged; a fixed grid after two time events 1e-12 s
// apart: κ = 2 through them, 6e8 times the error): the newest κ + 1 points must span at least
// κ·H/4. With a fixed H, where no error test would catch it, also every gap between them must be
// at least H/16 (a grid's gaps are H; the start-up ramp's halve from step to step; a step a time
// event cut short can be as short as 1e-14 s).
int MacroStepController::spaced_kappa(int kappa, double t_m, double t_next) const {
  const double h = t_next - t_m;
  const bool fixed = options_.mode == StepSizeMode::kFixed;
  const auto spaced = [&](int k) {
    const auto back = [&](int j) { return history_.time_back(static_cast<std::size_t>(j)); };
    if (t_m - back(k) < static_cast<double>(k) * h / 4.0) return false;
    for (int j = 0; fixed && j < k; ++j) {
      if (back(j) - back(j + 1) < h / 16.0) return false;
    }
    return true;
  };
  int k = kappa;
  while (k > 0 && !spaced(k)) --k;
  return k;
}

void MacroStepController::schedule(double t_end, int kappa) {
  plan_.t_begin = history_.newest_time();
  plan_.t_end = clip_to_event(plan_.t_begin, t_end, &plan_.h_before_event);
  plan_.kappa = kappa;
  plan_.repeat = n_fail_;
  plan_.estimator = effective_estimator(options_.estimator, kappa, history_.size());
}

void MacroStepController::accept(double t, std::span<const double> u, int kappa, double h) {
  if (u.size() != history_.channels()) {
    throw std::invalid_argument("MacroStepController::complete: u_next has " +
                                std::to_string(u.size()) + " values for " +
                                std::to_string(history_.channels()) + " coupling variables");
  }
  history_.push(t, u);
  ++stats_.accepted;
  ++stats_.accepted_by_kappa[static_cast<std::size_t>(kappa)];
  stats_.h_min = stats_.accepted == 1 ? h : std::min(stats_.h_min, h);
  stats_.h_max = std::max(stats_.h_max, h);
}

StepVerdict MacroStepController::complete(const StepOutcome& outcome) {
  if (finished_) throw std::logic_error("MacroStepController::complete: the run has finished");
  StepVerdict v =
      options_.mode == StepSizeMode::kFixed ? complete_fixed(outcome) : complete_variable(outcome);
  ++plan_.attempt;
  return v;
}

// With a fixed H, a macro point that a time event put between two grid points carries the values
// there for the step on to the next grid point; from that point on the polynomials run through
// grid points again. Kept, it made the points next to the event uneven, and where the event only
// kinked an output (an RC voltage at a PWM edge) the polynomials through them extrapolated that
// kink 3 to 7 times worse than the grid's. A jump's values after the event are held over the
// older points (jump_at_event), so the grid point before the event carries them too.
void MacroStepController::leave_event_points_behind(double t_grid) {
  const double h = options_.h;
  // The grid after the ramp (fixed_step_ramp_end) or from the start; its first point has no
  // point of the grid before it.
  const double t0 = options_.fixed_start_ramp ? options_.t_start + 2.0 * h : options_.t_start;
  if (!(t_grid > t0 + 0.5 * h) || !fixed_step_grid_point(t_grid, h, t0)) return;
  const double t_before = t_grid - h * (1.0 - 1e-6);  // later than the grid point before
  while (history_.size() >= 3 && history_.time_back(1) > t_before) history_.erase_back(1);
}

StepVerdict MacroStepController::complete_fixed(const StepOutcome& outcome) {
  const StepPlan p = plan_;
  accept(p.t_end, outcome.u_next, p.kappa, p.h());
  leave_event_points_behind(p.t_end);
  if (outcome.corrector_failed) ++stats_.corrector_failures;
  if (outcome.subsystem_failed) ++stats_.subsystem_failures;
  ++plan_.step;
  StepVerdict v;
  v.accepted = true;
  v.error_norm = outcome.estimate.norm();
  if (p.t_end >= options_.t_end) {
    finished_ = true;
    v.finished = true;
    v.kappa_next = p.kappa;
    return v;
  }
  const double t_m = history_.newest_time();
  const double t_next =
      options_.fixed_start_ramp
          ? fixed_step_ramp_end(t_m, options_.h, static_cast<long>(stats_.accepted),
                                options_.t_start)
          : fixed_step_grid_end(t_m, options_.h, options_.t_start);
  const double t_clipped = clip(t_m, t_next);
  const int kappa_next = spaced_kappa(
      std::min({p.kappa + 1, options_.kappa_fixed, static_cast<int>(history_.size()) - 1}), t_m,
      t_clipped);
  if (!(t_clipped - t_m >= StepSizeController::min_step(t_m))) {
    throw StepSizeUnderflow(t_m, t_clipped - t_m, StepSizeController::min_step(t_m));
  }
  schedule(t_clipped, kappa_next);
  v.kappa_next = kappa_next;
  v.r = (t_clipped - t_m) / p.h();
  v.source = FactorSource::kFixed;
  return v;
}

// D-49 checks lowerings in iterative steps only (an implicit estimator): there the step polynomial
// runs through the new value, and on a stiff interface κ = 1 leaves its zigzag on the slaved
// coupling variable. In explicit steps such an interface is a stability limit instead.
bool MacroStepController::implicit_estimator(const StepOutcome& outcome) const {
  const Estimator e = outcome.estimator != Estimator::kNone ? outcome.estimator : plan_.estimator;
  return e == Estimator::kImMD || e == Estimator::kImCV;
}

// Order control, the step-size factor and the start-up phase after an attempt that passed the
// error test, or failed it without a pending lowering (D-49), at T_M = history's newest point.
MacroStepController::Decision MacroStepController::decide(const StepOutcome& outcome, bool passed,
                                                          bool after_lowering) {
  const int kappa = plan_.kappa;
  const double h = plan_.h();
  const double t_m = history_.newest_time();
  const std::size_t n_hist = history_.size();
  const ScaledDerivativeNorms sdn = scaled_derivative_norms(
      history_, h, OrderController::highest_sdn_needed(kappa), options_.tolerances);
  Decision d;
  d.kappa = order_.select(kappa, sdn, n_fail_, n_hist);
  const double r_own = step_.a_posteriori_factor(outcome.estimate, kappa);
  double r_raw;
  if (d.kappa == kappa) {
    r_raw = r_own;
    d.source = FactorSource::kAPosteriori;
  } else if (n_hist >= static_cast<std::size_t>(d.kappa) + 2) {
    const double norm = a_priori_error_norm(history_, d.kappa, t_m + h, options_.tolerances);
    r_raw = step_.a_priori_factor(norm, d.kappa);
    d.source = FactorSource::kAPriori;
  } else {
    r_raw = r_own;
    d.source = FactorSource::kAPrioriShortHistory;
  }
  d.r = step_.limit(r_raw, n_fail_, false);
  if (passed && start_.active()) {
    const VariableStartPhase::Decision s =
        start_.after_accepted_step(kappa, d.kappa, d.r, options_.order.kappa_max, n_hist);
    if (s.r != d.r || s.kappa != d.kappa) d.source = FactorSource::kStartUp;
    d.kappa = s.kappa;
    d.r = s.r;
  }
  // D-49: judge a lowering by its first step's own factor; note a new one with the step the
  // degree it leaves asked for.
  const double r_own_limited = step_.limit(r_own, n_fail_, false);
  if (passed && after_lowering) order_.confirm_lowering(r_own_limited >= 1.0);
  if (passed && d.kappa < kappa && implicit_estimator(outcome)) {
    order_.note_lowering(kappa, r_own_limited * h);
  }
  return d;
}

StepVerdict MacroStepController::complete_variable(const StepOutcome& outcome) {
  const StepPlan p = plan_;
  const double h = p.h();
  const int kappa = p.kappa;
  const bool failed = outcome.corrector_failed || outcome.subsystem_failed;
  if (!failed && outcome.estimate.kind == ErrorEstimate::Kind::kNone) {
    throw std::invalid_argument(
        "MacroStepController::complete: variable step sizes need an error estimate");
  }
  StepVerdict v;
  v.error_norm = outcome.estimate.norm();
  const bool passed = !failed && outcome.estimate.passed();
  if (passed) {
    accept(p.t_end, outcome.u_next, kappa, h);
    n_fail_ = 0;
    order_.record_attempt(true, h, kappa);
    ++plan_.step;
  } else {
    ++n_fail_;
    ++stats_.rejected;
    if (outcome.corrector_failed) ++stats_.corrector_failures;
    if (outcome.subsystem_failed) ++stats_.subsystem_failures;
    order_.record_attempt(false, h, kappa);
    start_.after_failed_step();
  }
  v.accepted = passed;

  const double t_m = history_.newest_time();
  if (t_m >= options_.t_end) {
    finished_ = true;
    v.finished = true;
    v.kappa_next = kappa;
    v.source = FactorSource::kFinished;
    return v;
  }

  const std::size_t n_hist = history_.size();
  const bool after_lowering = order_.lowering_pending();
  // D-49: a failed lowering may send the next attempt back to the degree it left.
  const int back_to = after_lowering && !passed && !failed ? order_.lowering_failed(h) : -1;
  int kappa_new;
  double r;
  if (failed) {
    order_.forget_lowering();
    kappa_new = order_.overrides_only(kappa, n_fail_, n_hist);
    r = step_.limit(0.25, n_fail_, true);
    v.source = FactorSource::kCorrectorFailure;
  } else if (back_to >= 0) {
    kappa_new = back_to;
    r = std::clamp(order_.change_check().fallback_h / h, 0.25, 0.9);
    v.source = FactorSource::kLoweringRefuted;
  } else {
    const Decision d = decide(outcome, passed, after_lowering);
    kappa_new = d.kappa;
    r = d.r;
    v.source = d.source;
  }
  order_.record_decision(kappa, kappa_new, r);
  const double h_new = step_.next_step(h, r, t_m);
  schedule(clip(t_m, t_m + h_new), kappa_new);
  v.r = r;
  v.kappa_next = kappa_new;
  return v;
}

void MacroStepController::set_event_limit(double t) {
  if (finished_)
    throw std::logic_error("MacroStepController::set_event_limit: the run has finished");
  if (std::isnan(t)) throw std::invalid_argument("MacroStepController::set_event_limit: NaN");
  event_limit_ = t;
  // The plan as it was before an earlier limit shortened it, then this limit's.
  const double t_m = plan_.t_begin;
  const double wanted =
      plan_.h_before_event > 0.0 ? clip(t_m, t_m + plan_.h_before_event) : plan_.t_end;
  plan_.t_end = clip_to_event(t_m, wanted, &plan_.h_before_event);
}

// A variable the event moved by less than 1e-6 of its tolerance did not jump (the consistent
// update after the event may round it differently): its history stays.
void MacroStepController::jump_at_event(std::span<const double> u_after, double h_before) {
  if (finished_) {
    throw std::logic_error("MacroStepController::jump_at_event: the run has finished");
  }
  if (u_after.size() != history_.channels()) {
    throw std::invalid_argument(
        "MacroStepController::jump_at_event: " + std::to_string(u_after.size()) + " values for " +
        std::to_string(history_.channels()) + " coupling variables");
  }
  const ErrorTolerances& tol = options_.tolerances;
  std::vector<double> moved(u_after.size());
  for (std::size_t c = 0; c < moved.size(); ++c) {
    moved[c] = 1e-6 * (component_atol(tol, WeightGroup::kCouplingVariable, c) +
                       tol.rtol * std::abs(u_after[c]));
  }
  history_.jump_newest(u_after, moved);  // throws for values that are not finite
  // The step after the event: at least as long as the one before the event shortened it.
  if (options_.mode == StepSizeMode::kVariable && h_before > plan_.h()) {
    const double t_m = plan_.t_begin;
    schedule(clip(t_m, t_m + std::min(h_before, options_.step.h_max)), plan_.kappa);
  }
}

void MacroStepController::resume_step(double h, int kappa) {
  if (finished_) throw std::logic_error("MacroStepController::resume_step: the run has finished");
  if (options_.mode != StepSizeMode::kVariable) {
    throw std::logic_error("MacroStepController::resume_step: the step size is fixed");
  }
  const double t_m = history_.newest_time();
  if (!std::isfinite(h) || h < StepSizeController::min_step(t_m) || kappa < 0) {
    throw std::invalid_argument("MacroStepController::resume_step: H " + std::to_string(h) +
                                " or degree " + std::to_string(kappa) + " out of range");
  }
  const int by_history = static_cast<int>(history_.size()) - 1;
  const double t_next = clip(t_m, t_m + std::min(h, options_.step.h_max));
  const int k = spaced_kappa(std::min({kappa, options_.order.kappa_max, by_history}), t_m, t_next);
  start_.after_failed_step();
  order_.forget_lowering();
  order_.reset();
  schedule(t_next, k);
}

}  // namespace macrostep::control
