// The metadata of a co-simulation run (private to the run library; docs/reference/commands.md): the
// JSON beside the result file, in an HDF5 result also its root attributes. What is known before the
// run starts is written into it first; the observer completes it when the run ends, however it
// ends (DESIGN.md contract 5: a failed run's metadata names the cause).
#pragma once

#include <exception>
#include <nlohmann/json.hpp>

#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "result_files.hpp"
#include "run_tally.hpp"

namespace macrostep::run {

// The metadata known before the run starts: command, configuration, model, partition, the
// resolved co-simulation and solver options, output files, versions.
nlohmann::ordered_json run_metadata(const config::RunConfig& config, const CosimOptions& options,
                                    const system::CoupledSystem& system, const CosimResult& result);

// Σ_L Σ_N T_{L,N}: the nominal runs of every pass, all subsystems (beside the perturbed runs'
// time, which sums over subsystems as well).
double nominal_ns(const schemes::SchemeResult& r);
// Subsystem integrations (nominal and extra runs) per subsystem and accepted macro step; 0
// before the first accepted step.
double integrations_per_step(const schemes::SchemeResult& r);

// The metadata's "error" entry: the cause of a failed run as data.
nlohmann::ordered_json failure_json(const std::exception& e);

// Completes and writes the metadata when the run ends: status, rows, reached time, statistics
// (steps, order histogram, work per subsystem; a completed run also failures by cause, H and
// corrector statistics), the time breakdown and, after a failure, the error. Added after the
// result table, so that the rows are the file's. A failure to write the metadata of a failed run
// is told on stderr only.
class MetadataWriter final : public RunObserver {
 public:
  MetadataWriter(nlohmann::ordered_json meta, const config::RunConfig& config, ResultFiles& files,
                 const RunTally& tally, const CosimResult& result,
                 const system::CoupledSystem& system)
      : meta_(std::move(meta)),
        config_(config),
        files_(files),
        tally_(tally),
        result_(result),
        system_(system) {}

  // The metadata so far (the executor's factory adds the placement and the recoveries).
  nlohmann::ordered_json& meta() { return meta_; }
  // The metadata of a run whose process died of a fatal signal (unexpected_end.hpp): what is
  // known now, status "failed", the cause "crash"; no statistics.
  std::string crash_document() const;
  // The metadata of a run ended by a second SIGINT / SIGTERM while a model in the master did not
  // return (unexpected_end.hpp): status "interrupted"; no statistics.
  std::string stopped_document() const;

  void started(executors::Executor& executor) override { executor_ = &executor; }
  void finished(const RunEnd& end) override;

 private:
  nlohmann::ordered_json meta_;
  const config::RunConfig& config_;
  ResultFiles& files_;
  const RunTally& tally_;
  const CosimResult& result_;
  const system::CoupledSystem& system_;  // the coupling laws' histograms
  const executors::Executor* executor_ = nullptr;
};

}  // namespace macrostep::run
