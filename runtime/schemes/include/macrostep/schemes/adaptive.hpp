// `scheme = "auto"`: every macro step is an explicit Jacobi step (explicit_jacobi.hpp), a
// semi-implicit one or an implicit one (implicit.hpp), chosen from the work that each costs per
// simulated second (docs/design/methods.md §4.8).
//
// Why: an explicit step integrates each subsystem once (twice with exMD), a semi-implicit step
// twice plus one perturbed run per input (the predictor's), an implicit step about three times,
// each pass with its perturbed runs (imMD's test knows only after a pass that it was the last);
// but where the explicit scheme is limited by stability (stiff couplings, a system at rest) the
// iterative ones take steps that are orders of magnitude longer. Where the coupling is linear
// one Newton step solves it, so the semi-implicit scheme has the implicit stability limit at a
// third to two thirds of the cost; where it is stiff and nonlinear only the converged Newton
// iteration keeps the long steps. Which is cheapest depends on the system and changes within a
// run; the user should not have to know.
//
// How (all decisions from deterministic counts, so that every executor makes the same choice and
// the result stays bit-identical, DESIGN.md contract 1):
//   - work of an attempt = the solver calls of all its runs, each subsystem's weighted by its
//     size (PassRunner::attempt_work); a scheme's rate = work / simulated time over the last
//     kWindow accepted steps of its stretch (rejected attempts' work included), after kWarmup
//     accepted steps in which H adapts;
//   - the run starts explicit (implicit where explicit steps cannot run); once a stretch has
//     spent its allowance of work (the first one: kFirstProbe accepted steps) and its rate has
//     stopped falling (by kFallFactor from one window to the next: a scheme whose H still grows,
//     after a switch or as the system comes to rest, is getting cheaper by itself, and a probe
//     would be measured against a rate on its way down), another scheme is probed: it runs from
//     the same history, step size and order (the one controller carries over) until its rate is
//     measured;
//   - which one: of the schemes not running, one never measured before a measured one, and of
//     those never measured semi-implicit before implicit; then the one with the lowest last
//     measured rate (ties: semi-implicit, implicit, explicit), except that the scheme whose probe
//     failed last comes last (its rate was just measured, the other's is older and may be one of
//     a transient that would otherwise stand for the rest of the run);
//   - implicit steps are a candidate where semi-implicit ones cannot run, until they have been
//     measured once, where their last measured rate was below the semi-implicit steps', or where
//     at least one in kMismatchShare attempts of the last semi-implicit stretch left a coupling
//     mismatch ‖φ(y^c) − s^c‖ above the convergence tolerance τ: the converged iteration then
//     computes something else, and it may take longer steps. Otherwise an implicit step is
//     mostly the semi-implicit one with one or two more passes with perturbed runs (drive
//     trains, demo, branched, chains K-4.3 to K-5.3, S-5.4b, S-5.8, A.1: the same H to within
//     5 %), but not always: on K-5.5's corner the semi-implicit steps leave little mismatch and
//     take a hundredth of the implicit H (docs/design/methods.md §4.8), hence the one
//     measurement;
//   - a semi-implicit step whose corrector pass leaves a coupling mismatch above
//     kEscalationLimit is repeated as an implicit step from T_N (escalate): one Newton step solves
//     a nonlinear coupling law only near the predictor, and far from it u_{N+1} = φ(y^c) lies off
//     the coupling's fixed point where no estimator looks (K-5.7's cubic dampers: forces off by
//     1e13 N at single macro points). The step stays one of the semi-implicit stretch, whose rate
//     then carries the repetition's work;
//   - the probe is kept if its rate is below the left scheme's (by kKeepMargin) over its whole
//     measured stretch (longer memory than the probe's window: one transient does not set the
//     bar); a probe that is dearer but still getting cheaper from one window to the next (its H
//     grows from the left scheme's) goes on for another window, up to kMaxExtensions and while
//     its extra work stays within 1/kAllowance of the interrupted stretch's work; otherwise
//     the run switches back, and the next probe waits until the stretch has spent kAllowance
//     times the probe's extra work (beyond the left scheme's rate over the probe's simulated
//     time, at least kMinExtra of its work), so that probing costs at most about 1/kAllowance
//     of the run; doubled for every earlier probe of the same scheme that failed in a row (at
//     most 2^kMaxBackoff): a probe's work leaves out what the switch back costs (the left
//     scheme's H after the probe's steps, and on a stiff interface its first steps' estimate of
//     the explicit steps' fast zigzag, K-5.5), and a scheme that failed again and again is not
//     probed every few dozen steps;
//   - a failed probe is retried at once where the scheme gone back to, measured over its first
//     two windows and no longer getting cheaper, costs more than kRetryFactor times the probe's
//     rate: the probe was judged against that scheme's rate from before it, and a transient that
//     began meanwhile (an impulse reaching a stiff subsystem) may have multiplied it; on
//     S-5.4b's multirate cut the explicit steps gone back to cost 20 times their earlier rate and
//     carried 72 % of the run's squared error. Once per failed probe: a retry that fails is not
//     retried;
//   - a probe is skipped (its allowance doubles) while the scheme it would try had a last
//     measured rate kSkipFactor times the current scheme's; at most kMaxSkips times in a row
//     (the rate may be one of a transient such as the start-up's short steps), one more for
//     every further factor kSkipFactor between the rates (max_skips): a scheme measured a
//     thousand times dearer is not tried again every few hundred steps, and each failed try
//     disturbs the scheme it interrupts (S-5.5: the implicit steps regrow their H over thousands
//     of steps after a probe of explicit steps at their stability limit of 1e-12 s);
//   - a switch resumes the step size and degree that the entered scheme last took (its last
//     accepted step; MacroStepScheme::resumed_step), explicit steps at most the H of the step
//     just concluded: the controller's H belongs to the scheme left. Iterative steps may run far
//     beyond the explicit stability limit, where one explicit step can pass the error test (both
//     of exMD's runs start to diverge alike) and the coupling then blows up (K-5.5: H = 1.7e-4 s
//     against explicit steps of about 1e-8 s); and a failed probe of explicit steps would leave
//     the iterative scheme it returns to at the explicit limit, to regrow its H over hundreds of
//     steps. A scheme not run before starts from the controller's H and κ;
//   - the estimator is the one the user named, in the running scheme's form (exMD ↔ imMD,
//     exCV ↔ imCV; exLE's implicit form is imMD; semi-implicit and implicit steps take the same
//     form), and the controller's D-33 fallback maps alike.
// A system that a scheme cannot run (a joint: no explicit steps; a Jacobian strategy that cannot
// serve it: no semi-implicit or implicit steps) is run by the others, and the statistics say why.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

class AdaptiveScheme final : public MacroStepScheme {
 public:
  static constexpr int kWarmup = 8;            // accepted steps of a stretch before it is measured
  static constexpr int kWindow = 16;           // accepted steps a rate is taken over
  static constexpr int kFirstProbe = 256;      // accepted steps before the first probe
  static constexpr double kAllowance = 8;      // work between probes per extra work of a failed
                                               // probe (beyond the left scheme's rate)
  static constexpr double kMinExtra = 0.125;   // the extra work counted: at least this share
  static constexpr double kSkipFactor = 4;     // a probe is skipped while the chosen scheme's last
                                               // rate was this many times the current one
  static constexpr int kMaxSkips = 2;          // in a row, where the rates differ by less than
                                               // kSkipFactor² (max_skips)
  static constexpr double kKeepMargin = 1.15;  // a probe is kept if this much cheaper (hysteresis)
  // A probe that is not (yet) cheaper goes on for another window while its rate still falls by
  // this factor from one window to the next (H still growing after the switch), at most
  // kMaxExtensions times.
  static constexpr double kFallFactor = 0.7;
  static constexpr int kMaxBackoff = 16;
  // Once the scheme gone back to after a failed probe has two windows measured and its rate no
  // longer falls, the probe is retried at once if that rate exceeds this many times the probe's
  // (once per failed probe): the probe was judged against the left scheme's rate from before,
  // and a transient may have raised it since.
  static constexpr double kRetryFactor = 4;
  static constexpr int kMaxExtensions = 8;
  // Implicit steps are a candidate (besides the other reasons above) once at least one in
  // kMismatchShare of the attempts of the last semi-implicit stretch left a coupling mismatch
  // above τ (AttemptResult::iteration_residual).
  static constexpr int kMismatchShare = 8;
  // A semi-implicit step whose corrector pass leaves a coupling mismatch above this many times
  // the coupling variables' tolerance is escalated: repeated as an implicit step (escalate).
  static constexpr double kEscalationLimit = 10;
  // The version of export_state's layout, its first value: import_state refuses another.
  static constexpr double kStateLayout = 6;

  // `corrector`: the implicit steps' options (iteration implicit); the semi-implicit steps take
  // the same with one corrector pass. Throws std::invalid_argument for invalid ones.
  explicit AdaptiveScheme(corrector::CorrectorOptions corrector);
  // Throws std::invalid_argument when no scheme can run the system or the options (every
  // reason), or for approximations other than Lagrange (their rates follow explicit steps).
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                        PassRunner& runner) override;
  void concluded(bool accepted) override;
  std::optional<StepResumption> resumed_step() const override { return resumption_; }
  // Layout: [0] the choice (kStateLayout, mode, probe flag, counters, rates, allowance, the
  // sub-schemes' array counts, the last H and κ per scheme, the failed probes in a row:
  // adaptive.cpp), [1] the work and [2] the simulated time of the window's steps (kWindow each),
  // [3] the statistics per scheme, [4] the recent switches (six values each), then the arrays of
  // the explicit, the semi-implicit and the implicit scheme (none for a scheme that cannot run
  // the system).
  std::vector<std::vector<double>> export_state() const override;
  void import_state(const std::vector<std::vector<double>>& state) override;
  void add_statistics(SchemeResult& result) const override;

 private:
  using Mode = StepKind;  // indexes the per-scheme arrays in its order
  static constexpr std::size_t kModes = 3;
  static std::size_t index(Mode m) { return static_cast<std::size_t>(m); }
  // Probes skipped in a row at most, where the scheme to try had `ratio` (> kSkipFactor) times
  // the current rate when it last ran.
  static int max_skips(double ratio);
  struct Stretch {
    std::uint64_t accepted = 0;  // accepted steps since the scheme was entered
    double work = 0.0;           // all work since then
    double time = 0.0;           // simulated time of its accepted steps
    double pending_work = 0.0;   // work of attempts since the last accepted one
    std::array<double, kWindow> window_work{}, window_time{};
    std::uint64_t window_count = 0;  // accepted steps entered into the window (ring position)
    double measured_work = 0.0, measured_time = 0.0;  // of every step after the warm-up
    std::uint64_t judged_at = kWindow;  // window_count at which a probe is judged next
    double judged_rate = 0.0;           // a probe's rate when it was last extended (0: never)
    // Whether the scheme is still getting cheaper by itself (its window rate fell by kFallFactor
    // from the last full window to this one; unknown, and so true, before two): compared at
    // window_count == settled_at against settled_rate.
    std::uint64_t settled_at = kWindow;
    double settled_rate = 0.0;
    bool falling = true;
    bool measured() const { return window_count >= judged_at; }
    double rate() const;  // over the window
    // Over every measured step of the stretch: the bar a probe of another scheme must meet.
    double long_rate() const { return measured_time > 0.0 ? measured_work / measured_time : 0.0; }
  };

  MacroStepScheme& scheme(Mode m);
  const MacroStepScheme& scheme(Mode m) const;
  AttemptResult escalate(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                         PassRunner& runner, const AttemptResult& semi);
  void record(bool accepted);
  void decide(double t_next);
  void judge_probe(double t_next, double rate);
  // The schemes a probe from the current one may try, in the order of the rule above.
  std::vector<Mode> candidates() const;
  // Why a switch happened (SchemeChoiceStatistics::Switch::reason).
  enum class Why : std::uint8_t { kProbe, kBack };
  void switch_to(Mode mode, Why why, double t_next, double rate_left, double rate_now);
  void import_choice(const std::vector<double>& c);

  ExplicitJacobi explicit_;
  IterativeScheme semi_, implicit_;
  std::array<bool, kModes> ok_{true, true, true};  // per mode: it can run the system
  std::string only_reason_;
  Mode mode_ = Mode::kExplicit;
  bool probing_ = false;
  Mode left_mode_ = Mode::kExplicit;        // the scheme a probe left
  double left_rate_ = 0.0;                  // its rate
  double left_work_ = 0.0;                  // the work of the stretch a probe interrupted
  double allowance_ = 0.0;                  // work the current stretch spends before it may probe
  int skipped_in_row_ = 0;                  // probes skipped since the last one made
  std::array<double, kModes> last_rate_{};  // per mode the last rate measured in it (0: never)
  std::optional<Mode> failed_last_;         // the scheme of the last probe that failed
  double retry_rate_ = 0.0;  // rate of the probe just failed, while it may be retried (0: not)
  bool retrying_ = false;    // the running probe is a retry (kRetryFactor)
  std::array<double, kModes> failed_in_row_{};  // per mode: its probes that failed in a row
  double tau_ = 0.33;                           // the corrector's convergence tolerance
  double last_mismatch_ = 0.0;                  // of the last attempt (semi-implicit ones)
  bool escalated_ = false;                      // the last attempt was escalated
  // Of the last semi-implicit stretch: attempts, and those that left a mismatch above τ.
  std::array<double, 2> semi_mismatches_{};
  Stretch stretch_;
  double last_work_ = 0.0, last_t_begin_ = 0.0, last_t_end_ = 0.0;
  int last_kappa_ = 0;  // of the last attempt
  // Per mode: H and κ of its last accepted step (H = 0: none yet).
  std::array<double, kModes> last_h_{};
  std::array<int, kModes> last_step_kappa_{};
  // What concluded() asks the next plan to take (resumed_step); set by a switch.
  std::optional<StepResumption> resumption_;
  // Per mode: attempts, accepted, work, time; then the number of switches, of skipped probes and
  // of escalated steps.
  std::array<double, 4 * kModes + 3> counts_{};
  // The recent switches: T_N, from (Mode), to (Mode), why (adaptive.cpp's events), the rate left,
  // the rate it was measured against (0 where none).
  std::vector<std::array<double, 6>> switches_;
};

}  // namespace macrostep::schemes
