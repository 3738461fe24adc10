// StabilityLimitGuard: ends an adaptive explicit run that crawls at a stability limit, with the
// diagnosis and what to use instead, rather than letting it run for days.
//
// Rule: at the 1000th accepted macro step of the run (or of its continuation) and at every
// doubling of that count, the pace so far is projected to the end time:
//   projected = accepted · (t_end − T)/(T − T_first).
// If more than kCrawlSteps (1e8) steps remain, the diagnosis is asked for once (stability_check
// .hpp's explicit_stability_limit: the system linearised at t0 is stable under explicit macro
// steps only far below H_init). With a diagnosis the guard throws StabilityLimited; without one
// it stays silent for the rest of the run (the slow pace has another cause, e.g. tight
// tolerances, which the user may want). The rule counts steps, never wall time, so whether a run
// stops is part of its result, the same on every machine and executor.
//
// The guard is an observer (observer.hpp): it throws from accepted() after the result table
// has written the point, so every row up to there stays in the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "macrostep/run/observer.hpp"

namespace macrostep::run {

inline constexpr std::uint64_t kCrawlFirstCheck = 1000;
inline constexpr double kCrawlSteps = 1e8;

class StabilityLimitGuard final : public RunObserver {
 public:
  // `diagnose` is called at most once, from accepted(); it returns the diagnosis or nullopt.
  StabilityLimitGuard(double t_end, std::function<std::optional<std::string>()> diagnose);

  void accepted(const schemes::AcceptedPoint& point) override;

 private:
  double t_end_;
  std::function<std::optional<std::string>()> diagnose_;
  bool silent_ = false;
  bool have_first_ = false;
  double t_first_ = 0.0;
  std::uint64_t counted_ = 0;
  std::uint64_t next_check_ = kCrawlFirstCheck;
};

}  // namespace macrostep::run
