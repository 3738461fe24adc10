#include "tolerance_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace macrostep::run {

namespace {

// Swings at or below this fraction of a quantity's largest magnitude are rounding, not motion.
constexpr double kRounding = 1e-9;

}  // namespace

AbsoluteToleranceCheck::AbsoluteToleranceCheck(const system::CoupledSystem& system,
                                               const control::ErrorTolerances& tolerances,
                                               control::Estimator estimator, CosimResult& result)
    : system_(system),
      tolerances_(tolerances),
      result_(result),
      states_(control::monitors_states(estimator)),
      couplings_(control::monitors_coupling_variables(estimator)) {
  const auto monitored = system.monitored_outputs();
  values_.resize(monitored.size());
  for (std::size_t j = 0; j < monitored.size(); ++j) {
    const system::OutputRef& o = monitored[j].output;
    ranges_.push_back({system.monitored_groups()[j],
                       system.subsystem(o.subsystem).output_unit(o.output), monitored[j].name});
  }
  for (std::size_t c = 0; c < system.coupling_count(); ++c) {
    ranges_.push_back({control::WeightGroup::kCouplingVariable, system.coupling_unit(c),
                       system.coupling_name(c)});
  }
}

void AbsoluteToleranceCheck::accepted(const schemes::AcceptedPoint& point) {
  if (!states_ && !couplings_) return;
  const auto see = [](Range& r, double v) {
    if (!std::isfinite(v)) return;
    if (!r.seen) r.min = r.max = v;
    r.seen = true;
    r.min = std::min(r.min, v);
    r.max = std::max(r.max, v);
    r.largest = std::max(r.largest, std::abs(v));
  };
  if (states_) {
    system_.gather_monitored(point.outputs, values_);
    for (std::size_t j = 0; j < values_.size(); ++j) see(ranges_[j], values_[j]);
  }
  if (couplings_) {
    const std::size_t n = std::min(point.u.size(), system_.coupling_count());
    for (std::size_t c = 0; c < n; ++c) see(ranges_[values_.size() + c], point.u[c]);
  }
  if (points_ == 0) first_ = point.time;
  last_ = point.time;
  ++points_;
}

void AbsoluteToleranceCheck::finished(const RunEnd& end) {
  // A failed or interrupted run has its own report; a model that ended the simulation leaves a
  // complete run up to there.
  if ((end.status != "completed" && end.status != "terminated") || points_ < 2) return;
  // The classes (atol, unit), each with its members in index order and its largest swing.
  struct Class {
    std::vector<std::size_t> members;
    double largest_swing = 0.0;
  };
  std::map<std::pair<control::WeightGroup, std::string>, Class> classes;
  const std::size_t first = states_ ? 0 : values_.size();
  const std::size_t last = couplings_ ? ranges_.size() : values_.size();
  for (std::size_t j = first; j < last; ++j) {
    Class& c = classes[{ranges_[j].group, ranges_[j].unit}];
    c.members.push_back(j);
    c.largest_swing = std::max(c.largest_swing, ranges_[j].max - ranges_[j].min);
  }
  for (const auto& [key, c] : classes) {
    const double atol = control::group_atol(tolerances_, key.first);
    if (c.largest_swing > kToleranceCover * atol) continue;
    for (const std::size_t j : c.members) {
      const Range& q = ranges_[j];
      const double swing = q.max - q.min;
      if (!(swing > kRounding * q.largest)) continue;
      result_.tolerance_above_swing.push_back(
          {control::atol_key(q.group), atol, q.unit, q.name, swing, first_, last_});
    }
  }
}

}  // namespace macrostep::run
