// `scheme = "auto"`: every macro step is an explicit Jacobi step (explicit_jacobi.hpp) or an
// implicit one (implicit.hpp), chosen from the work that each costs per simulated second
// (docs/design/methods.md §4.8).
//
// Why: an explicit step integrates each subsystem once (twice with exMD), an implicit step about
// four times (predictor, perturbed runs, corrector passes), but where the explicit scheme is
// limited by stability (stiff couplings, a system at rest) the implicit one takes steps that
// are orders of magnitude longer. Which is cheaper depends on the system and changes within a
// run; the user should not have to know.
//
// How (all decisions from deterministic counts, so that every executor makes the same choice and
// the result stays bit-identical, DESIGN.md contract 1):
//   - work of an attempt = the solver calls of all its runs (PassRunner::attempt_work); a
//     scheme's rate = work / simulated time over the last kWindow accepted steps of its stretch
//     (rejected attempts' work included), after kWarmup accepted steps in which H adapts;
//   - the run starts explicit; once a stretch has spent its allowance of work (the first one:
//     kFirstProbe accepted steps), the other scheme is probed: it runs from the same history,
//     step size and order (the one controller carries over) until its rate is measured;
//   - the probe is kept if its rate is below the left scheme's (by kKeepMargin) over its whole
//     measured stretch (longer memory than the probe's window: one transient does not set the
//     bar); a probe that is dearer but still getting cheaper from one window to the next (its H
//     grows from the left scheme's) goes on for another window, up to kMaxExtensions and while
//     its extra work stays within 1/kAllowance of the interrupted stretch's work; otherwise
//     the run switches back, and the next probe waits until the stretch has spent kAllowance
//     times the probe's extra work (beyond the left scheme's rate over the probe's simulated
//     time, at least kMinExtra of its work), so that probing costs at most about 1/kAllowance
//     of the run;
//   - a probe is skipped (its allowance doubles; at most kMaxSkips times in a row) while the
//     other scheme's last measured rate is kSkipFactor times the current scheme's;
//   - the estimator is the one the user named, in the running scheme's form (exMD ↔ imMD,
//     exCV ↔ imCV; exLE's implicit form is imMD), and the controller's D-33 fallback maps alike.
// A system that one of the two cannot run (a joint: no explicit steps; a Jacobian strategy that
// cannot serve it: no implicit steps) runs the other throughout, and the statistics say why.
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
  static constexpr int kWarmup = 8;           // accepted steps of a stretch before it is measured
  static constexpr int kWindow = 16;          // accepted steps a rate is taken over
  static constexpr int kFirstProbe = 256;     // accepted steps before the first probe
  static constexpr double kAllowance = 8;     // work between probes per extra work of a failed
                                              // probe (beyond the left scheme's rate)
  static constexpr double kMinExtra = 0.125;  // the extra work counted: at least this share
  static constexpr double kSkipFactor = 4;    // a probe is skipped while the other scheme's last
                                              // rate was this many times the current one
  static constexpr int kMaxSkips = 2;
  static constexpr double kKeepMargin = 1.15;  // a probe is kept if this much cheaper (hysteresis)
  // A probe that is not (yet) cheaper goes on for another window while its rate still falls by
  // this factor from one window to the next (H still growing after the switch), at most
  // kMaxExtensions times.
  static constexpr double kFallFactor = 0.7;
  static constexpr int kMaxExtensions = 8;

  // `corrector`: the implicit steps' options (iteration implicit). Throws std::invalid_argument
  // for invalid ones.
  explicit AdaptiveScheme(corrector::CorrectorOptions corrector);
  // Throws std::invalid_argument when neither scheme can run the system or the options (both
  // reasons), or for approximations other than Lagrange (their rates follow explicit steps).
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                        PassRunner& runner) override;
  void concluded(bool accepted) override;
  // Layout: [0] the choice (mode, probe flag, counters, rates, allowance, the sub-schemes'
  // array counts: adaptive.cpp), [1] the work and [2] the simulated time of the window's steps
  // (kWindow each), [3] the statistics per scheme, [4] the recent switches (five values each),
  // then the explicit scheme's arrays and the implicit scheme's.
  std::vector<std::vector<double>> export_state() const override;
  void import_state(const std::vector<std::vector<double>>& state) override;
  void add_statistics(SchemeResult& result) const override;

 private:
  enum class Mode : std::uint8_t { kExplicit, kImplicit };
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
    bool measured() const { return window_count >= judged_at; }
    double rate() const;  // over the window
    // Over every measured step of the stretch: the bar a probe of the other scheme must meet.
    double long_rate() const { return measured_time > 0.0 ? measured_work / measured_time : 0.0; }
  };

  MacroStepScheme& active();
  const MacroStepScheme& active() const;
  void record(bool accepted);
  void decide(double t_next);
  // Why a switch happened (SchemeChoiceStatistics::Switch::reason).
  enum class Why : std::uint8_t { kProbe, kBack };
  void switch_to(Mode mode, Why why, double t_next, double rate_left, double rate_now);
  static const char* name(Mode m) { return m == Mode::kExplicit ? "explicit" : "implicit"; }

  ExplicitJacobi explicit_;
  IterativeScheme implicit_;
  bool explicit_ok_ = true, implicit_ok_ = true;
  std::string only_reason_;
  Mode mode_ = Mode::kExplicit;
  bool probing_ = false;
  double left_rate_ = 0.0;             // the rate of the scheme a probe left
  double left_work_ = 0.0;             // the work of the stretch a probe interrupted
  double allowance_ = 0.0;             // work the current stretch spends before it may probe
  int skipped_in_row_ = 0;             // probes skipped since the last one made
  std::array<double, 2> last_rate_{};  // explicit, implicit: the last rate measured in each
  Stretch stretch_;
  double last_work_ = 0.0, last_t_begin_ = 0.0, last_t_end_ = 0.0;
  // Per mode: attempts, accepted, work, time; then the number of switches and of skipped probes.
  std::array<double, 10> counts_{};
  // The recent switches: T_N, to implicit (0/1), why, the rate left, the rate it was measured
  // against (0 where none).
  std::vector<std::array<double, 5>> switches_;
};

}  // namespace macrostep::schemes
