// The checkpoints of a co-simulation run (checkpoint/checkpoint.hpp): when they are
// due, how the executor's subsystem workspaces get into and out of them. Private to the
// run library; CheckpointWriter (below) is the observer that writes them during a run.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "result_files.hpp"
#include "result_table.hpp"
#include "run_tally.hpp"

namespace macrostep::run {

// The directory for the executor's state files (Executor::export_state and import_state go
// through files): "<checkpoint>.states", created if missing, removed with the object. A fixed
// name beside the checkpoint, so that a run killed with SIGKILL leaves nothing that the next run
// or resume of the same checkpoint does not reuse and remove.
class StateFiles {
 public:
  explicit StateFiles(const std::string& checkpoint_path);
  // "<checkpoint>.states": the directory of `checkpoint_path`'s state files.
  static std::string directory_of(const std::string& checkpoint_path);
  ~StateFiles();
  StateFiles(const StateFiles&) = delete;
  StateFiles& operator=(const StateFiles&) = delete;
  std::string path(std::size_t subsystem) const;
  // Whether the directory `directory` holds nothing but such files: "subsystem-<n>.state" (path())
  // and the runners' temporaries "subsystem-<n>.state.tmp-<pid>" (what a replacing run may
  // remove).
  static bool holds_only_state_files(const std::string& directory);

 private:
  std::string directory_;
};

// Writes checkpoints to `path` every `every` (seconds of wall time or accepted macro steps;
// neither set: only the final one, when the run stops on a signal). The state files' directory
// is made at the first write.
class RunCheckpoints {
 public:
  RunCheckpoints(std::string path, checkpoint::Interval every, std::uint64_t accepted_so_far);
  // Whether one is due after `accepted` macro steps; `stopping`: a final one (a signal).
  bool due(std::uint64_t accepted, bool stopping) const;
  // Completes `c` (the driver's part filled in) with the controller, the scheme and every
  // subsystem's workspace, and writes it atomically. Throws std::runtime_error.
  void write(checkpoint::Checkpoint& c, std::uint64_t accepted,
             const control::MacroStepController& controller, const schemes::MacroStepScheme& scheme,
             executors::Executor& executor);
  // Between two macro steps of an unfinished run: write() when one is due, `describe` giving the
  // driver's part. With `signal` != 0 (a stop was asked for) that is the final one, and then
  // RunInterrupted is thrown naming it, or why it could not be written (the run stays
  // interrupted, not failed: an earlier checkpoint, written atomically, stays as it was).
  void between_steps(int signal, std::uint64_t accepted, double reached,
                     const std::function<checkpoint::Checkpoint()>& describe,
                     const control::MacroStepController& controller,
                     const schemes::MacroStepScheme& scheme, executors::Executor& executor);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  checkpoint::Interval every_;
  std::uint64_t last_accepted_;
  std::chrono::steady_clock::time_point last_time_;
  std::optional<StateFiles> files_;
};

// Gives every subsystem of `executor` its workspace from `c`. Throws checkpoint::CheckpointError
// (naming `checkpoint_path`) when they do not fit the executor's subsystems (a checkpoint of
// another configuration).
void restore_subsystems(const checkpoint::Checkpoint& c, const std::string& checkpoint_path,
                        executors::Executor& executor);

// The checkpoints of a run with `settings`: every settings.checkpoint_every and a final one on a
// signal, or (no interval) the final one only, where the run can have it (a CSV result, a scheme
// whose state a checkpoint carries); otherwise none, and `none` says why. The file is
// settings.checkpoint_path or the default beside the result file; SetupError if it would
// overwrite the configuration, a result file or another output (ResultFiles::destinations, to
// which the checkpoint and its state files' directory are added).
struct CheckpointPlan {
  std::string path;
  checkpoint::Interval every;
};
std::optional<CheckpointPlan> planned_checkpoints(const CosimSettings& settings, ResultFiles& files,
                                                  std::string& none);

// The run's checkpoints as an observer: between macro steps RunCheckpoints::between_steps with
// the run's own part of each checkpoint (configuration, arguments, output positions of the
// result and steps CSVs, the newest row and the counters, which a resumed run reads back:
// ResultTable::resume, RunTally::resume). Added after the result table and before the stop on
// a signal. All references must outlive the run.
class CheckpointWriter final : public RunObserver {
 public:
  // `tally.accepted`: the macro steps of the run so far (a resumed run's).
  CheckpointWriter(const CheckpointPlan& plan, const config::RunConfig& config,
                   const CosimOptions& options, const ResultFiles& files, const ResultTable& table,
                   const RunTally& tally, const system::CoupledSystem& system)
      : checkpoints_(plan.path, plan.every, tally.accepted),
        system_(system),
        config_(config),
        options_(options),
        files_(files),
        table_(table),
        tally_(tally) {}
  void between_steps(const BetweenSteps& at) override;

 private:
  checkpoint::Checkpoint describe() const;

  RunCheckpoints checkpoints_;
  const system::CoupledSystem& system_;
  const config::RunConfig& config_;
  const CosimOptions& options_;
  const ResultFiles& files_;
  const ResultTable& table_;
  const RunTally& tally_;
};

}  // namespace macrostep::run
