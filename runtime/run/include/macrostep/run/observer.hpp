// The observers of a co-simulation run (cosimulation.hpp): everything that watches a run without
// steering it. The run's own files and reports are observers (the result table, the steps table,
// the progress line, the checkpoints, the stop on a signal, the metadata), and a caller adds its
// own through CosimOptions::observers.
//
// Call order (all on the master's thread, one run):
//   started(executor)     once, after the executor exists (and a resumed run's subsystems are
//                         restored), before the first step; not called when the run fails while
//                         it is set up.
//   per attempt of a macro step:
//     accepted(point)     when the attempt was accepted, after the executor's accept():
//                         Executor::accepted_state() is the point's state. The initial point
//                         T_0 is reported once as step 0 (not again by a resumed run).
//     attempted(record)   after every attempt, accepted or not, once its verdict is applied.
//     between_steps(at)   after attempted(), where the controller, the scheme and the executor
//                         describe one consistent macro point (a checkpoint can be taken). An
//                         observer may throw here to stop the run (RunInterrupted).
//   finished(end)         once, when the run ends: completed, failed or interrupted, also when
//                         the failure came before started(). Observers are finished in the order
//                         they were added, the result table before the metadata, so that the
//                         metadata describes the files as they ended.
//
// An exception thrown by accepted(), attempted() or between_steps() ends the run with that
// failure (every observer is then finished with it). In finished() of a failed run, exceptions
// are the observer's to contain: the run's own failure is the one reported.
#pragma once

#include <exception>
#include <string>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::run {

// The point between two macro steps (RunObserver::between_steps).
struct BetweenSteps {
  const control::MacroStepController& controller;
  const schemes::MacroStepScheme& scheme;
  executors::Executor& executor;
  // The signal that asks the run to stop (CosimOptions::stop), read once for all observers of
  // this point; 0: go on.
  int stop_signal = 0;
};

// How a run ended (RunObserver::finished).
struct RunEnd {
  // "completed", "failed", "interrupted" or "terminated" (a model ended the simulation; failure
  // is then the schemes::ModelTerminatedRun) (the metadata's status).
  std::string status;
  // The failure that ended it (a RunInterrupted when interrupted); null when completed.
  const std::exception* failure = nullptr;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void started(executors::Executor& executor) { (void)executor; }
  virtual void accepted(const schemes::AcceptedPoint& point) { (void)point; }
  virtual void attempted(const schemes::StepRecord& record) { (void)record; }
  virtual void between_steps(const BetweenSteps& at) { (void)at; }
  virtual void finished(const RunEnd& end) { (void)end; }
};

}  // namespace macrostep::run
