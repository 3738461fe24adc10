// MacroStepController: one controlled macro step after another (METHODS §6.4), composing the
// error test (§6.1), order control (§6.3), the step-size factor (§6.2), the start-up
// procedures (§6.5) and the H limits (D-27). It owns the accepted coupling-variable history.
//
// What it decides and what it does not:
//  - It decides accept/reject of an attempted step from the outcome the scheme reports, and
//    the next (κ, T_M, T_{M+1}). It appends (T_{N+1}, u_{N+1}) to the history on acceptance
//    and only then; a rejected or failed attempt leaves the history untouched, so the scheme
//    restores its subsystems' T_N snapshots and builds the repeated step from the same data.
//  - It does not run subsystems, build polynomials or compute estimates; the scheme does,
//    using history() and plan(), coupling/builders.hpp and control/estimators.hpp.
//
// Call order (one master thread; the controller is not thread-safe):
//   1. MacroStepController ctl(options, u0);      history = {(T_0, u_0)}, first plan ready
//   2. while (!ctl.finished()) {
//        const StepPlan& p = ctl.plan();          T_N = p.t_begin, T_{N+1} = p.t_end, κ, the
//                                                 effective estimator (D-33), attempt id
//        scheme: predictor / step polynomials from ctl.history() with p.kappa and p.t_end;
//                run subsystems from the T_N snapshot; u_{N+1}; error estimate for
//                p.estimator (concept-1 norms or ‖u^pre − u_{N+1}‖)
//        StepVerdict v = ctl.complete(outcome);   accept → history gains (T_{N+1}, u_{N+1});
//                                                 reject → nothing changes but N_fail
//        scheme: v.accepted ? commit snapshots at T_{N+1} : restore snapshots of T_N
//      }
//   Ownership: the controller owns the history (read it via history(), never keep a span of
//   it across complete()); complete() copies u_next, so the outcome's spans need to live only
//   through the call. plan() is valid only while !finished(); it is replaced by complete()
//   (take a copy if it must outlive that call). complete() throws StepSizeUnderflow when the next H
//   would fall below H_min (D-27: 1e−14·max(1, |T_M|), 1e−22 s near t0); the controller is then
//   unusable.
//
// Variable mode (estimator ≠ none), per completed attempt:
//   pass = !corrector_failed && !subsystem_failed && ‖ε‖ ≤ 1
//   pass: append; N_fail = 0; N_succ += 1          fail: N_fail += 1; N_succ = 0; the
//                                                  start-up phase ends
//   corrector failure: κ_new = overrides only, r = 0.25
//   else: κ_new = order control on the history to T_M with H = T_{N+1} − T_N;
//         r = Eq. 3.27/3.28 a posteriori if κ_new = κ, else the a-priori r̃^u of Eq. 3.26 at
//         T_M + H (a-posteriori r if the history is too short for κ_new + 2 points);
//         Listing 3.3 limits; start-up phase (D-32) may replace (κ_new, r) by (κ+1, 2)
//   D-49 (steps with an implicit estimator): the first attempt after a lowering from κ = 1 that
//         fails the error test for the second time in a row returns to κ = 1 with κ = 1's own
//         step (order.hpp)
//   N_succ reset if κ_new ≠ κ or r < 1; H_new = min(r·H, H_max); T_{M+1} = T_M + H_new,
//   clipped to t_end (a remainder below max(H_min, 1e−8·H_new) is absorbed).
// Fixed mode (exH): every attempt is accepted (an estimate, if reported, is only recorded;
//   a corrector failure is counted and the given u_{N+1} continues); κ rises by one per step
//   to the target κ, as far as the newest κ + 1 points span at least κ·H/4 and lie at least H/16
//   apart (after a short step, such as one a time event cut off, a polynomial through close
//   points would amplify their differences over H); T_{N+1} from Listing 5.1 (ramp) or the plain
//   grid T_0 + k·H.
//
// Exportable state: export_state() writes everything that steers the controller
// (history, plan, N_fail, N_succ, the order-change check of D-49, start-up phase, finished,
// statistics) and its options as a
// Cap'n Proto message (ipc/schema/state.capnp, ControllerState); import_state() rebuilds a
// controller from it, in this or another process, whose plan()/complete() sequence continues
// bit-identically to the exporter's for the same outcomes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/control/order.hpp"
#include "macrostep/control/startup.hpp"
#include "macrostep/control/step_size.hpp"
#include "macrostep/polynomials/history.hpp"

namespace macrostep::control {

enum class StepSizeMode : std::uint8_t {
  kVariable,  // error-controlled H and κ (§6.4)
  kFixed,     // exH: constant H after the Listing 5.1 start, fixed target κ
};

struct MacroStepOptions {
  StepSizeMode mode = StepSizeMode::kVariable;
  double t_start = 0.0;
  double t_end = 0.0;  // required, > t_start
  double h = 0.0;      // H_init (variable mode, required) or the fixed H (fixed mode)
  // Variable mode: the estimator that decides acceptance (not none). Fixed mode: optional,
  // monitoring only.
  Estimator estimator = Estimator::kExMD;
  int kappa_fixed = 2;           // fixed mode: target degree (0..5)
  bool variable_start = true;    // variable mode: initial phase of seed 000 §3.4
  bool fixed_start_ramp = true;  // fixed mode: Listing 5.1
  std::size_t history_capacity = polynomials::CouplingHistory::kDefaultCapacity;
  OrderOptions order;
  StepSizeOptions step;
  ErrorTolerances tolerances;

  // Throws std::invalid_argument naming the offending field.
  void validate() const;
};

// The step the scheme should attempt next.
struct StepPlan {
  std::uint64_t attempt = 0;  // increases with every attempt, repeats included
  std::uint64_t step = 0;     // N: accepted steps before this one
  int repeat = 0;             // N_fail: failed attempts of this step so far
  double t_begin = 0.0;       // T_N
  double t_end = 0.0;         // T_{N+1}
  int kappa = 0;
  Estimator estimator = Estimator::kNone;  // effective estimator for this step (D-33)
  // The H this plan had before a subsystem's time event shortened it to end there
  // (set_event_limit); 0 if it did not.
  double h_before_event = 0.0;
  double h() const { return t_end - t_begin; }
};

// What the scheme reports about an attempt.
struct StepOutcome {
  ErrorEstimate estimate;          // a posteriori; kNone allowed in fixed mode or on failure
  bool corrector_failed = false;   // implicit corrector did not converge (counts as failure)
  std::span<const double> u_next;  // u_{N+1}, history.channels() values; read on acceptance
  // A subsystem could not integrate the step (an IDA error): handled like a corrector failure
  // (r = 0.25, D-26), counted apart.
  bool subsystem_failed = false;
  // The estimator that produced `estimate` where it is not the plan's (scheme auto takes its
  // implicit form in semi-implicit and implicit steps, methods.md §4.8); kNone: the plan's. D-49
  // reads it: it checks lowerings of iterative steps only.
  Estimator estimator = Estimator::kNone;
};

// How the factor r of the next step came about (diagnostics, tests).
enum class FactorSource : std::uint8_t {
  kAPosteriori,          // κ_new = κ: Eq. 3.27/3.28 from the step's estimate
  kAPriori,              // κ_new ≠ κ: r̃^u of Eq. 3.26
  kAPrioriShortHistory,  // κ_new ≠ κ but fewer than κ_new + 2 points: a-posteriori r
  kStartUp,              // start-up phase: doubling (D-32)
  kCorrectorFailure,     // r = 0.25
  kLoweringRefuted,      // D-49: back to the degree a lowering left, with its own step
  kFixed,                // fixed mode
  kFinished,             // the run reached t_end
};

struct StepVerdict {
  bool accepted = false;
  bool finished = false;    // T_M = t_end: no further plan
  double error_norm = 0.0;  // estimate.norm() of the attempt (0 without an estimate)
  double r = 1.0;           // factor applied to H (after limits and start-up)
  int kappa_next = 0;
  FactorSource source = FactorSource::kFinished;
};

struct MacroStepStatistics {
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;            // failed attempts (error test or corrector)
  std::uint64_t corrector_failures = 0;  // of which the corrector failed
  std::uint64_t subsystem_failures = 0;  // of which a subsystem failed to integrate
  std::array<std::uint64_t, kMaxKappa + 1> accepted_by_kappa{};  // order histogram
  double h_min = 0.0;                                            // smallest / largest accepted step
  double h_max = 0.0;
};

// Version of export_state()'s format; import_state() accepts only this one.
inline constexpr std::uint32_t kControllerStateFormatVersion = 3;

class MacroStepController {
 public:
  // u0: the consistent coupling variables at t_start (history.channels() = u0.size()).
  MacroStepController(MacroStepOptions options, std::span<const double> u0);

  // The controller's state as a Cap'n Proto message (the caller owns the bytes). May be called
  // at any point between the calls of the call order above, also once finished(). Exporting
  // equal states gives equal bytes.
  std::vector<std::byte> export_state() const;

  // A controller that continues from `state` (export_state() bytes, any alignment, read only
  // during the call) as the exporter would have: plan(), and complete() for equal outcomes,
  // are bit-identical from then on. `options` must equal the exporter's field by field (they
  // are in the message) and `channels` must equal its number of coupling variables.
  // Throws std::invalid_argument for invalid options (as the constructor), another format
  // version, differing options or channel count (the message names the field);
  // std::runtime_error for malformed, truncated or inconsistent bytes (never a crash).
  static MacroStepController import_state(MacroStepOptions options,
                                          std::span<const std::byte> state, std::size_t channels);

  const MacroStepOptions& options() const { return options_; }
  const polynomials::CouplingHistory& history() const { return history_; }
  bool finished() const { return finished_; }
  // Throws std::logic_error once finished().
  const StepPlan& plan() const;

  // Concludes the attempt described by plan(); see the call order above. Throws
  // std::invalid_argument for an outcome that does not fit the mode (no estimate in variable
  // mode without a corrector failure, u_next of the wrong size on acceptance),
  // std::logic_error once finished(), StepSizeUnderflow (D-27).
  StepVerdict complete(const StepOutcome& outcome);

  // Replaces the next plan's step size and degree by (h, κ), between complete() and the next
  // plan() in variable mode: a scheme that switches to another kind of step resumes the H and κ
  // that kind last took (scheme auto, docs/design/methods.md §4.8), where the controller's H
  // belongs to the steps just left. H is limited by H_max and clipped to t_end like the
  // controller's own; κ by κ_max, the history's points, and so that the newest κ + 1 points
  // span at least κ·H/4 (an extrapolation far beyond its points' spacing amplifies their
  // differences: after short steps the degree falls, to 0 if need be). The start-up phase ends,
  // D-49's pending check is dropped and N_succ restarts (a new degree and step size, as after an
  // order change). The plan's attempt and step counters are kept. Throws std::logic_error once
  // finished() or in fixed mode, std::invalid_argument for an h that is not finite or below
  // H_min at T_M, or a negative κ.
  void resume_step(double h, int kappa);

  // Time events (docs/design/methods.md §3.3): t is the next time at which a subsystem has
  // scheduled an event (+infinity: none). No plan steps over it: the plan in force and every
  // later one end there at the latest (one that would end short of it by less than the clip's
  // snap, max(H_min, 1e-8·H), ends on it). A time at or before the plan's T_N is ignored (the
  // subsystems take such an event at the start of their next step). Between complete() and the
  // next plan(), in either mode; it holds through rejections until a later call replaces it.
  // Throws std::logic_error once finished(), std::invalid_argument for NaN.
  void set_event_limit(double t);
  double event_limit() const { return event_limit_; }
  // After an accepted step that ended at an event (a subsystem's outputs jump there:
  // runner::RunResult::event_outputs), between complete() and the next plan(): the newest point
  // of the history gets u_after, the coupling variables after the event, and every variable the
  // event moved (by more than 1e-6 of its tolerance weight) has its older points set to that
  // value too, so that its polynomials hold the value after the jump instead of running through
  // it; the others keep their history, and the plan its degree. In variable mode the next step
  // is at least h_before long (the accepted step's StepPlan::h_before_event: the H it had before
  // the event shortened it), within H_max and the end time. Throws std::logic_error once
  // finished(), std::invalid_argument for u_after of the wrong size or not finite.
  void jump_at_event(std::span<const double> u_after, double h_before);

  const MacroStepStatistics& statistics() const { return stats_; }
  bool in_start_phase() const { return start_.active(); }
  int consecutive_failures() const { return n_fail_; }
  int consecutive_successes() const { return order_.successes(); }

 private:
  friend struct ControllerStateCodec;  // export_state / import_state (controller_state.cpp)
  struct ImportTag {};
  // Empty history, no plan: import_state() fills in both.
  MacroStepController(ImportTag, MacroStepOptions options, std::size_t channels);

  StepVerdict complete_fixed(const StepOutcome& outcome);
  // Fixed H, after accepting the grid point `t_grid`: removes the event points since the grid
  // point before it from the history (a no-op unless `t_grid` is on the grid).
  void leave_event_points_behind(double t_grid);
  StepVerdict complete_variable(const StepOutcome& outcome);
  struct Decision {
    int kappa = 0;
    double r = 1.0;
    FactorSource source = FactorSource::kAPosteriori;
  };
  Decision decide(const StepOutcome& outcome, bool passed, bool after_lowering);
  bool implicit_estimator(const StepOutcome& outcome) const;
  void accept(double t, std::span<const double> u, int kappa, double h);
  void schedule(double t_end, int kappa);
  double clip(double t_m, double t_next) const;
  // κ lowered until the newest κ + 1 points span at least κ·(t_next − t_m)/4 (and, with a fixed
  // H, no two of them lie closer than (t_next − t_m)/16).
  int spaced_kappa(int kappa, double t_m, double t_next) const;
  // t_next shortened to the event limit (and the step it had before, in *h_before).
  double clip_to_event(double t_m, double t_next, double* h_before) const;

  MacroStepOptions options_;
  polynomials::CouplingHistory history_;
  OrderController order_;
  StepSizeController step_;
  VariableStartPhase start_;
  StepPlan plan_;
  MacroStepStatistics stats_;
  int n_fail_ = 0;
  bool finished_ = false;
  double event_limit_ = std::numeric_limits<double>::infinity();
};

}  // namespace macrostep::control
