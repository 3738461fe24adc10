// AbsoluteToleranceCheck: finds the quantities whose error the macro-step controller cannot see
// because an absolute tolerance covers how far they move (private to the run library).
//
// The controller's weights are 1/(atol + rtol·|x|) (error_norm.hpp) with one atol per group:
// atol_pos and atol_vel for the outputs the state estimators (exLE, exMD, imMD) watch, atol_u for
// the coupling variables of exCV and imCV. Their defaults are mechanical scales (metres, m/s,
// newtons). A quantity of another scale, such as a hydraulic line's volume that swings by 1e-7
// m³, can lie wholly inside its atol: every error estimate of it is then below 1, and a run can
// drift far off with no failed step. Rule, at the end of a completed run (or one a model ended):
// the watched quantities of one atol and one unit form a class (a hydraulic model's volumes in
// m³ beside a mechanism's positions in m, both under atol_pos); where every swing (max − min
// over the accepted points) of a class is at most kToleranceCover times its quantity's atol (the
// group's, scaled by the quantity's nominal where the model gives one), the
// tolerance is out of scale for that unit, and its quantities that moved (more than 1e-9 of their
// largest magnitude) are reported with the atol's key. A class with a larger swing is not: its
// quantities that barely move (a chain's masses before a wave reaches them) are small, not
// mis-scaled. Quantities whose model gives no unit form one class per atol. The run's result is
// not changed: the check only reports (CosimResult::tolerance_above_swing, the summary's
// warning, the metadata's statistics).
//
// A class is judged over the whole run and, where that does not report it, over its first half,
// quarter and eighth (kToleranceWindows), the longest that does: an error the estimates cannot
// see grows unchecked, and once it has carried the quantities ten times the atol away from where
// they started, their swing over the whole run no longer shows the mis-scale (F-2.8's volumes,
// 1e-7 m³ against atol_pos = 1e-7, drift past 1e-6 m³ after two fifths of the run).
//
// A resumed run sees only its continuation: its swings and windows are those from the checkpoint
// on (a shorter stretch moves less; the report names the interval).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// A class is reported when its largest swing is at most this many times its atol: the tolerance
// then allows an error of a tenth of the whole motion in every step.
inline constexpr double kToleranceCover = 10.0;
// The leading parts of the run's interval a class is also judged over, longest first.
inline constexpr std::array<double, 3> kToleranceWindows = {0.5, 0.25, 0.125};

class AbsoluteToleranceCheck final : public RunObserver {
 public:
  // Watches what `estimator` weighs: the estimator that decides acceptance, kNone for a run
  // at a fixed step (nothing is watched). `end_time` is where the run is to end (the windows are
  // parts of the interval from its first accepted point to there). `system` and `result` must
  // outlive the check (`tolerances` is read here); finished() of a completed run sets
  // result.tolerance_above_swing.
  AbsoluteToleranceCheck(const system::CoupledSystem& system,
                         const control::ErrorTolerances& tolerances, control::Estimator estimator,
                         double end_time, CosimResult& result);

  void accepted(const schemes::AcceptedPoint& point) override;
  void finished(const RunEnd& end) override;

 private:
  struct Quantity {
    control::WeightGroup group = control::WeightGroup::kPosition;
    std::string unit;  // the output's or coupling variable's ("" where the model gives none)
    std::string name;
    double atol = 0.0;  // its own (the group's, times its nominal where it has one)
  };
  struct Extent {  // of one quantity's values over the accepted points so far
    bool seen = false;
    double min = 0.0, max = 0.0, largest = 0.0;
  };
  // The extents at the end of a leading part of the run (its last point's time `to`).
  struct Window {
    bool taken = false;
    double to = 0.0;
    std::vector<Extent> extents;
  };
  // Each class's members (indices into quantities_), by (atol group, unit).
  using Classes = std::map<std::pair<control::WeightGroup, std::string>, std::vector<std::size_t>>;
  Classes classes() const;
  // Reports the class's moved members if its largest swing over `extents` is within the cover.
  bool report(const std::vector<std::size_t>& members, const std::vector<Extent>& extents,
              double to);

  const system::CoupledSystem& system_;
  CosimResult& result_;
  bool states_ = false;     // the monitored outputs (concept 1)
  bool couplings_ = false;  // the coupling variables (concept 2)
  double end_time_ = 0.0;
  std::vector<double> values_;
  std::vector<Quantity> quantities_;  // monitored outputs, then coupling variables
  std::vector<Extent> extents_;       // over the whole run so far
  std::array<Window, kToleranceWindows.size()> windows_;
  std::size_t points_ = 0;
  double first_ = 0.0, last_ = 0.0;
};

}  // namespace macrostep::run
