// The co-simulation run of `macrostep run` (cosimulation.hpp): the driver owns the system, the
// executor and the scheme, keeps the run's tally and tells the observers (observer.hpp) what
// happens; everything the run writes or reports is an observer.
#include "macrostep/run/cosimulation.hpp"

#include <fmt/format.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checked_system.hpp"
#include "divergence_guard.hpp"
#include "elapsed.hpp"
#include "executor_factory.hpp"
#include "macrostep/run/failure.hpp"
#include "macrostep/run/observer.hpp"
#include "result_files.hpp"
#include "result_table.hpp"
#include "run_checkpoints.hpp"
#include "run_metadata.hpp"
#include "run_observers.hpp"
#include "run_tally.hpp"
#include "stability_check.hpp"
#include "stability_limit_guard.hpp"
#include "tolerance_check.hpp"
#include "unexpected_end.hpp"

namespace macrostep::run {

namespace {

// The observers of one run in the order they are told: the run's own first (result table,
// steps table, progress, checkpoints, stop, then the caller's), the metadata last.
class Observers {
 public:
  void add(RunObserver* observer) { list_.push_back(observer); }

  void started(executors::Executor& executor) {
    for (RunObserver* o : list_) o->started(executor);
  }
  void accepted(const schemes::AcceptedPoint& p) {
    for (RunObserver* o : list_) o->accepted(p);
  }
  void attempted(const schemes::StepRecord& r) {
    for (RunObserver* o : list_) o->attempted(r);
  }
  void between_steps(const BetweenSteps& at) {
    for (RunObserver* o : list_) o->between_steps(at);
  }

  // Finishes every observer with `end`. After a failure an observer's own exception is its
  // problem (observer.hpp); when one throws at the end of a completed run, the run has failed
  // with that error: the observers after it are finished with it, and it propagates.
  void finished(const RunEnd& end) {
    for (std::size_t k = 0; k < list_.size(); ++k) {
      try {
        list_[k]->finished(end);
      } catch (const std::exception& e) {
        if (end.failure != nullptr) continue;
        const RunEnd failed{"failed", &e};
        for (std::size_t m = k + 1; m < list_.size(); ++m) {
          try {
            list_[m]->finished(failed);
          } catch (const std::exception&) {  // the first error is the one reported
          }
        }
        throw;
      }
    }
  }

 private:
  std::vector<RunObserver*> list_;
};

// The result's columns (names, units, descriptions, the coupling count) and each subsystem's
// first state column (all_states).
void name_columns(const config::RunConfig& config, const system::CoupledSystem& system,
                  const std::vector<OutputColumn>& outputs, std::vector<std::size_t>& state_offset,
                  CosimResult& result) {
  const bool all_states = result.settings.all_states;
  result_columns(config, system, outputs, all_states, result.columns, state_offset);
  ColumnLabels labels = result_labels(system, outputs, all_states, result.columns.size());
  result.units = std::move(labels.units);
  result.descriptions = std::move(labels.descriptions);
  result.coupling_count = system.coupling_count();
}

// A failure that means more than it says is thrown as what it means: a continuation that does not
// fit is the checkpoint's error, an explicit run that a stiff coupling limits says so and what to
// use instead. Returns for every other failure (the caller rethrows it).
void rethrow_explained(const std::exception& e, const config::RunConfig& config,
                       const CosimOptions& options, const CosimSettings& settings,
                       const system::CoupledSystem& system) {
  if (dynamic_cast<const schemes::ContinuationMismatch*>(&e) != nullptr) {
    throw checkpoint::CheckpointError(fmt::format("{}: {}", options.checkpoint_path, e.what()));
  }
  if (const auto* u = dynamic_cast<const control::StepSizeUnderflow*>(&e)) {
    if (auto why = explicit_stability_limit(config, settings, system)) {
      throw StabilityLimitedUnderflow(*u, std::move(*why));
    }
  }
}

// The observers that judge a run rather than record it: the divergence guard, the
// stability-limit guard (adaptive explicit runs) and the absolute-tolerance check (runs with an
// estimator). `u0` is filled when the run starts (DivergenceGuard).
struct RunChecks {
  DivergenceGuard divergence;
  StabilityLimitGuard crawl;
  AbsoluteToleranceCheck tolerance;
  bool crawl_applies;

  RunChecks(const config::RunConfig& config, const CosimSettings& settings,
            const system::CoupledSystem& system, const schemes::SchemeOptions& scheme_options,
            const std::vector<double>& u0, CosimResult& result)
      : divergence(system, scheme_options.control.tolerances,
                   config::to_string(settings.cosim.scheme), u0),
        crawl(settings.end_time,
              [&config, &settings, &system] {
                return explicit_stability_limit(config, settings, system);
              }),
        tolerance(system, scheme_options.control.tolerances,
                  variable_steps(scheme_options) ? scheme_options.control.estimator
                                                 : control::Estimator::kNone,
                  settings.end_time, result),
        crawl_applies(settings.cosim.scheme == config::CosimScheme::kExplicit &&
                      variable_steps(scheme_options)) {}

  void add_to(Observers& observers) {
    observers.add(&divergence);
    if (crawl_applies) observers.add(&crawl);
    observers.add(&tolerance);
  }

  static bool variable_steps(const schemes::SchemeOptions& o) {
    return o.control.mode == control::StepSizeMode::kVariable;
  }
};

// Where a run continues: a resumed run's controller, scheme and law states and its attempts so
// far; a new run's is empty (between_steps is the caller's).
schemes::Continuation continuation_of(const checkpoint::Checkpoint* resume, const RunTally& tally) {
  schemes::Continuation continuation;
  if (resume != nullptr) {
    continuation.controller_state = &resume->controller;
    continuation.scheme_state = &resume->scheme;
    continuation.law_states = &resume->laws;
    continuation.attempts = tally.accepted + tally.rejected;
  }
  return continuation;
}

}  // namespace

CosimResult run_cosimulation(const config::RunConfig& config, const CosimOptions& options) {
  const auto start = Clock::now();
  CosimResult result;

  // ---- setup: everything that can be the user's fault happens before integration ----
  result.settings = resolve_cosim(config, options);
  const CosimSettings& settings = result.settings;
  std::vector<library::ModelDescription> models;
  schemes::SchemeOptions scheme_options;
  const system::CoupledSystem system =
      checked_system(config, result.settings, models, scheme_options);
  std::vector<OutputColumn> outputs = output_columns(config, system);
  std::vector<std::size_t> state_offset;
  name_columns(config, system, outputs, state_offset, result);
  const SchemeColumns scheme_columns = run::scheme_columns(settings.cosim.scheme);
  ResultFiles files({&config, config::ResultKind::kCosimulation, options.output_file,
                     result.columns, system.subsystem_count(), scheme_columns, options.resume,
                     settings.checkpoint_every.has_value(), result.units, result.descriptions,
                     options.replace_files});
  result.csv_path = files.result_path();
  result.json_path = files.json_path();
  result.steps_path = files.steps_path();

  std::string no_checkpoint;  // why a signal finds no checkpoint to write
  const std::optional<CheckpointPlan> plan = planned_checkpoints(settings, files, no_checkpoint);
  files.open();  // every path is checked: now the files are made

  // ---- the observers ----
  RunTally tally;
  tally.last_h = settings.scheme.control.h;
  ResultTable table(files, system, std::move(outputs), std::move(state_offset), settings.all_states,
                    settings.cosim.output_every, settings.end_time,
                    settings.executor.output_interval, result);
  if (options.resume != nullptr) {
    table.resume(*options.resume);
    tally.resume(*options.resume);
  }
  std::optional<StepsTable> steps;  // none beside a character device
  if (files.steps() != nullptr) steps.emplace(*files.steps(), scheme_columns);
  ProgressReport progress(options.progress, settings.end_time, tally);
  std::optional<CheckpointWriter> checkpoints;
  if (plan) checkpoints.emplace(*plan, config, options, files, table, tally, system);
  StopOnSignal stop(tally, no_checkpoint);
  std::vector<double> u0;  // the initial coupling variables, set when the run starts
  RunChecks checks(config, settings, system, scheme_options, u0, result);
  MetadataWriter metadata(run_metadata(config, options, system, result), config, files, tally,
                          result, system);
  Observers observers;
  observers.add(&table);
  if (steps) observers.add(&*steps);
  observers.add(&progress);
  if (checkpoints) observers.add(&*checkpoints);
  observers.add(&stop);
  checks.add_to(observers);
  for (RunObserver* o : options.observers) observers.add(o);
  observers.add(&metadata);

  // ---- the run ----
  schemes::Continuation continuation = continuation_of(options.resume, tally);
  std::unique_ptr<executors::Executor> executor;
  continuation.between_steps = [&](const control::MacroStepController& controller,
                                   const schemes::MacroStepScheme& scheme) {
    const int signal = options.stop != nullptr ? options.stop->load() : 0;
    observers.between_steps({controller, scheme, *executor, signal});
  };
  const auto end_run = [&](const RunEnd& end) {
    result.time_by_kappa = tally.time_by_kappa;
    result.wall_ns = ns_since(start);
    observers.finished(end);
  };
  try {
    system.reset_law_states();  // u0 from t0's law state (the pipeline resets it again)
    u0 = system.initial_couplings();
    executor = make_executor(settings, system, models, u0, metadata.meta(), result.placement);
    if (options.resume != nullptr) {
      restore_subsystems(*options.resume, options.checkpoint_path, *executor);
    }
    observers.started(*executor);
    // A model in this process that calls exit() or crashes still leaves a report.
    const UnexpectedEnd guard(end_run, files.json_path(), metadata.crash_document(),
                              metadata.stopped_document());
    const std::unique_ptr<schemes::MacroStepScheme> scheme = schemes::make_scheme(scheme_options);
    const auto on_accepted = [&](const schemes::AcceptedPoint& p) {
      tally.accepted_point(p);
      observers.accepted(p);
    };
    const auto on_attempted = [&](const schemes::StepRecord& r) {
      tally.attempted(r);
      observers.attempted(r);
    };
    schemes::run_scheme(system, *executor, *scheme, scheme_options, on_accepted, on_attempted,
                        result.run, continuation);
  } catch (const schemes::ModelTerminatedRun& e) {
    // The model ended the simulation: the results up to the last accepted point are complete.
    result.terminated = terminated_message(e, &config);
    end_run({"terminated", &e});
    return result;
  } catch (const std::exception& e) {
    const bool interrupted = dynamic_cast<const RunInterrupted*>(&e) != nullptr;
    end_run({interrupted ? "interrupted" : "failed", &e});
    rethrow_explained(e, config, options, settings, system);
    throw;
  }
  end_run({"completed", nullptr});
  return result;
}

}  // namespace macrostep::run
