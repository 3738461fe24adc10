// AbsoluteToleranceCheck: finds the quantities whose error the macro-step controller cannot see
// because an absolute tolerance covers how far they move (private to the run library).
//
// The controller's weights are 1/(atol + rtol·|x|) (error_norm.hpp) with one atol per group:
// atol_pos and atol_vel for the outputs the state estimators (exLE, exMD, imMD) watch, atol_u for
// the coupling variables of exCV and imCV. Their defaults are mechanical scales (metres, m/s,
// newtons). A quantity of another scale, such as a hydraulic line's volume that swings by 1e-7
// m³, can lie wholly inside its atol: every error estimate of it is then below 1, and a run can
// drift far off with no failed step. Rule: at the end of a completed run (or one a model ended), a
// watched quantity whose swing over the accepted points (max − min) is positive, above rounding
// (more than 1e-9 of its largest magnitude) and at most kToleranceCover times its atol is reported,
// with the atol's key. The run's result is not changed: the check only reports (CosimResult::
// tolerance_above_swing, the summary's warning, the metadata's statistics).
//
// A resumed run sees only its continuation: its swings are those from the checkpoint on (a
// shorter stretch moves less; the report names the interval).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// A quantity is reported when its swing is at most this many times its atol: the tolerance then
// allows an error of a tenth of the whole motion in every step.
inline constexpr double kToleranceCover = 10.0;

class AbsoluteToleranceCheck final : public RunObserver {
 public:
  // Watches what `estimator` weighs: the estimator that decides acceptance, kNone for a run
  // at a fixed step (nothing is watched). `system`, `tolerances` and `result` must outlive the
  // check; finished() of a completed run sets result.tolerance_above_swing.
  AbsoluteToleranceCheck(const system::CoupledSystem& system,
                         const control::ErrorTolerances& tolerances, control::Estimator estimator,
                         CosimResult& result);

  void accepted(const schemes::AcceptedPoint& point) override;
  void finished(const RunEnd& end) override;

 private:
  struct Range {
    bool seen = false;
    double min = 0.0, max = 0.0, largest = 0.0;
  };
  const system::CoupledSystem& system_;
  const control::ErrorTolerances& tolerances_;
  CosimResult& result_;
  bool states_ = false;     // the monitored outputs (concept 1)
  bool couplings_ = false;  // the coupling variables (concept 2)
  std::vector<double> values_;
  std::vector<Range> ranges_;  // monitored outputs, then coupling variables
  std::size_t points_ = 0;
  double first_ = 0.0, last_ = 0.0;
};

}  // namespace macrostep::run
