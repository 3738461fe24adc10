// Where a co-simulation run stands (private to the run library): its step counts, the time each
// degree covered, the newest accepted time and the last plan. The driver keeps it up to date
// before any observer sees an event, so that every observer reads the same numbers.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/control/order.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::run {

struct RunTally {
  std::uint64_t accepted = 0;  // accepted macro steps (the initial point counts nothing)
  std::uint64_t rejected = 0;  // rejected attempts
  std::array<std::uint64_t, control::kMaxKappa + 1> by_kappa{};  // accepted steps per degree
  std::array<double, control::kMaxKappa + 1> time_by_kappa{};    // simulated time per degree
  double reached = 0.0;                                          // the newest accepted macro point
  double last_h = 0.0;                                           // the last attempt's H and κ
  int last_kappa = 0;

  void attempted(const schemes::StepRecord& r);
  void accepted_point(const schemes::AcceptedPoint& p);
  // Continues the counts of a checkpoint; checkpoint::CheckpointError if its histogram does not
  // fit.
  void resume(const checkpoint::Checkpoint& c);
  // "H = ..., kappa K, N accepted, M rejected" (the progress line).
  std::string status() const;
};

}  // namespace macrostep::run
