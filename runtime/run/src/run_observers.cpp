// The steps table, the progress line and the stop on a signal (run_observers.hpp).
#include "run_observers.hpp"

#include "macrostep/run/interrupt.hpp"

namespace macrostep::run {

void StepsTable::attempted(const schemes::StepRecord& r) {
  steps_row(r, columns_, values_);
  table_.write_row(static_cast<double>(r.attempt), values_);
}

void ProgressReport::attempted(const schemes::StepRecord& r) {
  (void)r;
  line_.update(tally_.reached, [this] { return tally_.status(); });
}

void ProgressReport::finished(const RunEnd& end) {
  (void)end;
  line_.finish(tally_.reached, [this] { return tally_.status(); });
}

void StopOnSignal::between_steps(const BetweenSteps& at) {
  if (at.stop_signal != 0) throw RunInterrupted(at.stop_signal, tally_.reached, {}, no_checkpoint_);
}

}  // namespace macrostep::run
