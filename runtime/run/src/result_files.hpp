// The files a run writes (private to the run library; docs/reference/commands.md): the result table
// (CSV, or /results of an HDF5 file), for a co-simulation the per-attempt steps table
// ("<stem>.steps.csv", or /steps of the HDF5 file) and the JSON metadata "<stem>.json" (in an
// HDF5 file also as its root attributes). Monolithic and reference runs have no steps table.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/destinations.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::run {

// The columns a scheme adds to the steps table: none; "coupling_mismatch" (the semi-implicit
// scheme: StepRecord::coupling_mismatch); or before it "implicit" (1: the attempt was an
// implicit step) and "semi_implicit" (1: a semi-implicit step; an explicit step has 0 in both)
// for scheme auto.
enum class SchemeColumns : std::uint8_t { kNone, kMismatch, kKindAndMismatch };
SchemeColumns scheme_columns(config::CosimScheme scheme);
// The steps table's columns after its key "attempt": t_start, h, kappa, accepted,
// error_estimate, corrector_passes, wall_s, solver_s_1..n, idle_s_1..n (n subsystems), the
// scheme's columns, then the trace of the attempt's work: executor_s (the master's wall time
// inside the executor), extra_runs_1..n (comparison and perturbed runs) and extra_s_1..n (the sum
// of their integration times).
std::vector<std::string> steps_columns(std::size_t subsystems, SchemeColumns scheme);
// One attempt's row of the steps table (without the key, which is r.attempt): times in seconds,
// idle_s_L = wall_s − solver_s_L. `values` is resized to steps_columns(n, scheme).size().
void steps_row(const schemes::StepRecord& r, SchemeColumns scheme, std::vector<double>& values);
// "<dir>/<stem>.steps.csv" beside the result CSV "<dir>/<stem>.csv".
std::string steps_path(const std::string& result_path);

// The roles of a run's files (output::Destination::role; the metadata's "files"), besides
// output::kMetadataRole.
inline constexpr const char* kResultRole = "the result";
inline constexpr const char* kStepsRole = "the steps table";
inline constexpr const char* kCheckpointRole = "the checkpoint";
inline constexpr const char* kStateFilesRole = "the checkpoint's state files";

class ResultFiles {
 public:
  struct Request {
    const config::RunConfig* config = nullptr;
    config::ResultKind kind = config::ResultKind::kCosimulation;
    std::string output_file;  // --output; empty: config::default_output_file of `kind`
    std::vector<std::string> columns;
    // Co-simulation: the subsystem count of the steps table; 0: no steps table (monolithic).
    std::size_t step_subsystems = 0;
    // The scheme's columns of the steps table.
    SchemeColumns scheme_columns = SchemeColumns::kNone;
    // A resumed checkpoint: the CSVs are cut to its output positions and continued
    // (CsvWriter::continue_file); checkpoint::CheckpointError if they do not fit.
    const checkpoint::Checkpoint* resume = nullptr;
    bool checkpointed = false;  // the run writes checkpoints (their output positions are CSV's)
    // One per column of `columns` ("" where not known): the metadata's "columns"
    // (output::columns_json) and the HDF5 /results attribute "units" ("s" for time first);
    // `descriptions` likewise, the attribute "descriptions".
    std::vector<std::string> units;
    std::vector<std::string> descriptions;
    // The caller asked for existing files to be replaced (the Python package's overwrite=True,
    // which has checked them itself): only a result of another kind of run is refused.
    bool replace_files = false;
  };

  // Names and checks the files of `r`, writing nothing: the result file is `output_file` or
  // the default name of the run's kind (.h5/.hdf5: HDF5, anything else CSV), the metadata
  // "<stem>.json" beside it (none beside a character device such as /dev/null,
  // output/destinations.hpp). Every file goes through add(): SetupError if the name ends in
  // .json, a file would overwrite a file the configuration reads (config::input_files) or
  // another output, or a file cannot be created; an HDF5 result of a run that writes or resumes
  // checkpoints is a SetupError too (checkpoints continue CSV files only).
  //
  // Nothing is replaced unasked (DESIGN.md contract 5): a file that exists may be replaced only
  // as part of an earlier result of the same result file and kind of run, that is, the metadata
  // beside the result is a macrostep metadata document that describes this result file, records
  // this kind of run ("mode"), and lists the file in its "files" with the same role. A rerun of a
  // command thus replaces its own files; a result of another kind, another program's file, or
  // a metadata file of another result with the same stem (r.csv and r.h5 share r.json) is a
  // SetupError naming the file, what it is and what to do. Also replaceable: a character device;
  // when resuming, the checkpoint's own result and steps table (it checks their contents); an
  // existing checkpoint only if it is one of this result, its state-files directory only if it
  // holds nothing but state files; with Request::replace_files, every file but a result of
  // another kind and a metadata file that describes another result. The run adds its other
  // files (checkpoints) through add() before open().
  explicit ResultFiles(const Request& r);

  // Locks the result file for this process (output::WriteLock, held until destruction; not
  // beside a character device): SetupError if another command writes it now, before anything
  // is written. Then writes the metadata's claim on the files (unless resuming: "mode", "status":
  // "running", "files"; write_metadata replaces it), then creates the tables (or, resuming, cuts
  // the CSVs to the checkpoint's position and continues them: checkpoint::CheckpointError if they
  // do not fit). Throws SetupError if a file cannot be created (HDF5 output without a loadable
  // HDF5 library too); then the result and its metadata are as they were before open() where
  // the result was not touched, else the metadata says "failed" with the error. The accessors
  // below need it.
  void open();

  output::TableWriter& results() { return *results_; }
  output::TableWriter* steps() { return steps_; }  // null without a steps table
  bool hdf5() const { return h5_ != nullptr; }
  // Whether the result is a CSV file (not HDF5, not a character device); known before open().
  bool writes_csv() const { return !output::is_hdf5_path(result_path_) && !json_path_.empty(); }
  // The CSV writers, for a checkpoint's output position (null for an HDF5 result).
  const output::CsvWriter* results_csv() const { return csv_ ? &*csv_ : nullptr; }
  const output::CsvWriter* steps_csv() const { return steps_csv_ ? &*steps_csv_ : nullptr; }

  const std::string& result_path() const { return result_path_; }
  // Empty when the result is a character device.
  const std::string& json_path() const { return json_path_; }
  // Adds a file of the run (a checkpoint) to destinations(), checked as there and refused if it
  // exists and may not be replaced (above). Throws SetupError.
  void add(const std::string& role, const std::string& path, bool directory = false);
  // Every file of the run, checked together.
  const output::Destinations& destinations() const { return destinations_; }
  // The steps CSV, or the HDF5 file that holds /steps; empty without a steps table.
  const std::string& steps_path() const { return steps_path_; }

  // Closes the CSV tables (an HDF5 file stays open for its metadata). Throws OutputError.
  void close_tables();
  // `meta` as the metadata of this run's files: with "columns", every result column's name and
  // unit (output::columns_json), and "files", every destination (role, path, directory), which
  // a rerun's check_replaceable reads.
  nlohmann::ordered_json document(const nlohmann::ordered_json& meta) const;
  // Writes document(meta) as the metadata JSON (unless the result is a character device) and,
  // in an HDF5 file, its attributes (then closes that file). Throws OutputError.
  void write_metadata(const nlohmann::ordered_json& meta);
  // write_metadata for a run that failed: a failure to write is reported on stderr only (the
  // run's own error, which the caller rethrows, matters more).
  void write_metadata_after_failure(const nlohmann::ordered_json& meta);

 private:
  // Throws SetupError unless the existing file `path` (`role`) may be replaced (constructor).
  void check_replaceable(const std::string& role, const std::string& path) const;
  void open_csv(const Request& r);
  void open_hdf5(const Request& r);
  struct FileBefore;
  // After open() failed with `error` (its claim written): the files as they were if the result
  // is unchanged (the claim replaced by the metadata it replaced, or removed; a result file the
  // lock created removed), else the claim becomes a "failed" document with the error as every
  // failed run's metadata gives it. Errors here are reported on stderr only: the open's error is
  // the one the run exits with.
  void undo_claim(const FileBefore& before, const std::exception& error) noexcept;

  output::Destinations destinations_;
  Request request_;
  output::RecordedRun previous_;  // the metadata beside the result, as it was before the run
  bool special_ = false;          // the result is a character device (no siblings)
  std::string result_path_, json_path_, steps_path_;
  output::WriteLock lock_;  // before the writers: released after they are closed
  std::optional<output::CsvWriter> csv_, steps_csv_;
  std::unique_ptr<output::Hdf5File> h5_;
  output::TableWriter* results_ = nullptr;
  output::TableWriter* steps_ = nullptr;
};

}  // namespace macrostep::run
