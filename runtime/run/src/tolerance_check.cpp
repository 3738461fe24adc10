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
                                               control::Estimator estimator, double end_time,
                                               CosimResult& result)
    : system_(system),
      result_(result),
      states_(control::monitors_states(estimator)),
      couplings_(control::monitors_coupling_variables(estimator)),
      end_time_(end_time) {
  const auto monitored = system.monitored_outputs();
  values_.resize(monitored.size());
  for (std::size_t j = 0; j < monitored.size(); ++j) {
    const system::OutputRef& o = monitored[j].output;
    quantities_.push_back({system.monitored_groups()[j],
                           system.subsystem(o.subsystem).output_unit(o.output), monitored[j].name});
  }
  for (std::size_t c = 0; c < system.coupling_count(); ++c) {
    quantities_.push_back({control::WeightGroup::kCouplingVariable, system.coupling_unit(c),
                           system.coupling_name(c)});
  }
  // Each quantity's own atol (scaled by its output's nominal, D-53), by its position in its group.
  std::array<std::size_t, control::kWeightGroupCount> within{};
  for (Quantity& q : quantities_) {
    q.atol =
        control::component_atol(tolerances, q.group, within[static_cast<std::size_t>(q.group)]++);
  }
  extents_.resize(quantities_.size());
}

void AbsoluteToleranceCheck::accepted(const schemes::AcceptedPoint& point) {
  if (!states_ && !couplings_) return;
  if (points_ == 0) first_ = point.time;
  // A window ends before the first point past it: its extents are those of the points so far.
  for (std::size_t k = 0; k < windows_.size(); ++k) {
    Window& w = windows_[k];
    if (!w.taken && points_ > 0 &&
        point.time > first_ + kToleranceWindows[k] * (end_time_ - first_)) {
      w = {true, last_, extents_};
    }
  }
  const auto see = [](Extent& e, double v) {
    if (!std::isfinite(v)) return;
    if (!e.seen) e.min = e.max = v;
    e.seen = true;
    e.min = std::min(e.min, v);
    e.max = std::max(e.max, v);
    e.largest = std::max(e.largest, std::abs(v));
  };
  if (states_) {
    system_.gather_monitored(point.outputs, values_);
    for (std::size_t j = 0; j < values_.size(); ++j) see(extents_[j], values_[j]);
  }
  if (couplings_) {
    const std::size_t n = std::min(point.u.size(), system_.coupling_count());
    for (std::size_t c = 0; c < n; ++c) see(extents_[values_.size() + c], point.u[c]);
  }
  last_ = point.time;
  ++points_;
}

AbsoluteToleranceCheck::Classes AbsoluteToleranceCheck::classes() const {
  Classes found;
  const std::size_t first = states_ ? 0 : values_.size();
  const std::size_t last = couplings_ ? quantities_.size() : values_.size();
  for (std::size_t j = first; j < last; ++j) {
    found[{quantities_[j].group, quantities_[j].unit}].push_back(j);
  }
  return found;
}

bool AbsoluteToleranceCheck::report(const std::vector<std::size_t>& members,
                                    const std::vector<Extent>& extents, double to) {
  for (const std::size_t j : members) {
    if (extents[j].max - extents[j].min > kToleranceCover * quantities_[j].atol) return false;
  }
  bool reported = false;
  for (const std::size_t j : members) {
    const Quantity& q = quantities_[j];
    const double swing = extents[j].max - extents[j].min;
    if (!(swing > kRounding * extents[j].largest)) continue;
    result_.tolerance_above_swing.push_back(
        {control::atol_key(q.group), q.atol, q.unit, q.name, swing, first_, to});
    reported = true;
  }
  return reported;
}

void AbsoluteToleranceCheck::finished(const RunEnd& end) {
  // A failed or interrupted run has its own report; a model that ended the simulation leaves a
  // complete run up to there.
  if ((end.status != "completed" && end.status != "terminated") || points_ < 2) return;
  for (const auto& [key, members] : classes()) {
    if (report(members, extents_, last_)) continue;
    for (const Window& w : windows_) {  // longest first
      if (w.taken && w.to > first_ && report(members, w.extents, w.to)) break;
    }
  }
}

}  // namespace macrostep::run
