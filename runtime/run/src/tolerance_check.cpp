#include "tolerance_check.hpp"

#include <algorithm>
#include <cmath>

namespace macrostep::run {

namespace {

// Swings at or below this fraction of a quantity's largest magnitude are rounding, not motion.
constexpr double kRounding = 1e-9;

const char* atol_key(control::WeightGroup g) {
  switch (g) {
    case control::WeightGroup::kPosition:
      return "atol_pos";
    case control::WeightGroup::kVelocity:
      return "atol_vel";
    case control::WeightGroup::kCouplingVariable:
      break;
  }
  return "atol_u";
}

double atol_of(const control::ErrorTolerances& t, control::WeightGroup g) {
  switch (g) {
    case control::WeightGroup::kPosition:
      return t.atol_pos;
    case control::WeightGroup::kVelocity:
      return t.atol_vel;
    case control::WeightGroup::kCouplingVariable:
      break;
  }
  return t.atol_u;
}

}  // namespace

AbsoluteToleranceCheck::AbsoluteToleranceCheck(const system::CoupledSystem& system,
                                               const control::ErrorTolerances& tolerances,
                                               control::Estimator estimator, CosimResult& result)
    : system_(system),
      tolerances_(tolerances),
      result_(result),
      states_(control::monitors_states(estimator)),
      couplings_(control::monitors_coupling_variables(estimator)) {
  values_.resize(system.monitored_outputs().size());
  ranges_.resize(values_.size() + system.coupling_count());
}

void AbsoluteToleranceCheck::accepted(const schemes::AcceptedPoint& point) {
  if (!states_ && !couplings_) return;
  const auto see = [this](Range& r, double v) {
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
  const auto check = [this](const Range& r, control::WeightGroup g, const std::string& name) {
    const double swing = r.max - r.min;
    const double atol = atol_of(tolerances_, g);
    if (!(swing > kRounding * r.largest) || swing > kToleranceCover * atol) return;
    result_.tolerance_above_swing.push_back({atol_key(g), atol, name, swing, first_, last_});
  };
  const auto monitored = system_.monitored_outputs();
  const auto groups = system_.monitored_groups();
  if (states_) {
    for (std::size_t j = 0; j < monitored.size(); ++j) {
      check(ranges_[j], groups[j], monitored[j].name);
    }
  }
  if (couplings_) {
    for (std::size_t c = 0; c < system_.coupling_count(); ++c) {
      check(ranges_[monitored.size() + c], control::WeightGroup::kCouplingVariable,
            system_.coupling_name(c));
    }
  }
}

}  // namespace macrostep::run
