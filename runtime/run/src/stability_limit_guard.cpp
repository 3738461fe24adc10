#include "stability_limit_guard.hpp"

#include <fmt/format.h>

#include <utility>

#include "macrostep/run/cosimulation.hpp"

namespace macrostep::run {

StabilityLimitGuard::StabilityLimitGuard(double t_end,
                                         std::function<std::optional<std::string>()> diagnose)
    : t_end_(t_end), diagnose_(std::move(diagnose)) {}

void StabilityLimitGuard::accepted(const schemes::AcceptedPoint& point) {
  if (silent_) return;
  if (!have_first_) {  // the initial point, or the first point of a continuation
    have_first_ = true;
    t_first_ = point.time;
    return;
  }
  if (++counted_ < next_check_) return;
  next_check_ *= 2;
  const double covered = point.time - t_first_;
  if (!(covered > 0.0)) return;
  const double remaining = static_cast<double>(counted_) * (t_end_ - point.time) / covered;
  if (!(remaining > kCrawlSteps)) return;
  std::optional<std::string> why = diagnose_();
  if (!why) {
    silent_ = true;
    return;
  }
  throw StabilityLimited(fmt::format(
      "co-simulation stopped at t = {:.9g} s: {} macro steps took it from t = {:.9g} s (mean H "
      "{:.3g} s); at that pace the remaining {:.9g} s take about {:.1g} more: {}",
      point.time, counted_, t_first_, covered / static_cast<double>(counted_), t_end_ - point.time,
      remaining, *why));
}

}  // namespace macrostep::run
