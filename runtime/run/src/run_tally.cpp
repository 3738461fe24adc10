// Where a co-simulation run stands (run_tally.hpp).
#include "run_tally.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace macrostep::run {

void RunTally::attempted(const schemes::StepRecord& r) {
  if (r.accepted) {  // reported before the accepted point's observers (pipeline.cpp)
    reached = r.plan.t_end;
    ++accepted;
  } else {
    ++rejected;
  }
  last_h = r.plan.h();
  last_kappa = r.plan.kappa;
}

void RunTally::accepted_point(const schemes::AcceptedPoint& p) {
  if (p.step == 0) return;  // the initial point; attempted() counts the accepted steps
  ++by_kappa[static_cast<std::size_t>(p.kappa)];
  time_by_kappa[static_cast<std::size_t>(p.kappa)] += p.h;
}

void RunTally::resume(const checkpoint::Checkpoint& c) {
  if (c.accepted_by_kappa.size() != by_kappa.size() ||
      c.time_by_kappa.size() != time_by_kappa.size()) {
    throw checkpoint::CheckpointError(
        "the checkpoint's result row or order histogram does not fit its configuration");
  }
  accepted = c.accepted_steps;
  rejected = c.rejected_steps;
  std::copy(c.accepted_by_kappa.begin(), c.accepted_by_kappa.end(), by_kappa.begin());
  std::copy(c.time_by_kappa.begin(), c.time_by_kappa.end(), time_by_kappa.begin());
  reached = c.time;
}

std::string RunTally::status() const {
  return fmt::format("H = {:.3e} s, kappa {}, {} accepted, {} rejected", last_h, last_kappa,
                     accepted, rejected);
}

}  // namespace macrostep::run
