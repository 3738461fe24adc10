// The run's own observers that need no file of their own (private to the run library): the
// steps table, the progress line and the stop on a signal. The result table, the checkpoints
// and the metadata have their own headers.
#pragma once

#include <string>
#include <vector>

#include "macrostep/run/monolithic.hpp"
#include "macrostep/run/observer.hpp"
#include "progress_line.hpp"
#include "result_files.hpp"
#include "run_tally.hpp"

namespace macrostep::run {

// One row per attempt in the steps table (result_files.hpp steps_columns).
class StepsTable final : public RunObserver {
 public:
  StepsTable(output::TableWriter& table, SchemeColumns columns)
      : table_(table), columns_(columns) {}
  void attempted(const schemes::StepRecord& r) override;

 private:
  output::TableWriter& table_;
  SchemeColumns columns_;
  std::vector<double> values_;
};

// The progress line on stderr (progress_line.hpp) with the tally's status.
class ProgressReport final : public RunObserver {
 public:
  ProgressReport(MonolithicOptions::Progress mode, double end_time, const RunTally& tally)
      : line_(mode, end_time), tally_(tally) {}
  void attempted(const schemes::StepRecord& r) override;
  void finished(const RunEnd& end) override;

 private:
  ProgressLine line_;
  const RunTally& tally_;
};

// Stops the run between macro steps when a signal asked for it (interrupt.hpp): throws
// RunInterrupted at the tally's newest point. Added after the checkpoints, which write a final
// one first and stop the run themselves; `no_checkpoint` says why a stop has none.
class StopOnSignal final : public RunObserver {
 public:
  StopOnSignal(const RunTally& tally, std::string no_checkpoint)
      : tally_(tally), no_checkpoint_(std::move(no_checkpoint)) {}
  void between_steps(const BetweenSteps& at) override;

 private:
  const RunTally& tally_;
  std::string no_checkpoint_;
};

}  // namespace macrostep::run
