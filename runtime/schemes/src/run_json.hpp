// Result files and JSON pieces shared by the monolithic and co-simulation runs. Private to
// the schemes library.
#pragma once

#include <fmt/format.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/schemes/interrupt.hpp"
#include "macrostep/schemes/monolithic.hpp"

namespace macrostep::schemes {

// Work counters of one integrator (or summed over a subsystem's integrators).
inline nlohmann::ordered_json stats_json(const ida::AdvanceStats& s) {
  return nlohmann::ordered_json{{"micro_steps", s.steps},
                                {"residual_evals", s.residual_evals},
                                {"jacobian_evals", s.jacobian_evals},
                                {"nonlinear_iterations", s.nonlinear_iterations},
                                {"nonlinear_failures", s.nonlinear_failures},
                                {"error_test_failures", s.error_test_failures},
                                {"linear_setups", s.linear_setups},
                                {"solver_wall_ns", s.wall_ns}};
}

// The "error" entry of a run stopped by a signal.
inline nlohmann::ordered_json interrupted_json(const RunInterrupted& e) {
  return nlohmann::ordered_json{{"cause", "interrupted"},
                                {"signal", signal_name(e.signal())},
                                {"time", e.time()},
                                {"message", e.what()}};
}

// The metadata of a run that failed, as far as it can be written: a failure to write it (the
// disk that made the run fail is full) is reported on stderr, and the caller rethrows the run's
// own error, which matters more.
inline void write_json_after_failure(const std::string& path, const nlohmann::ordered_json& meta) {
  try {
    output::write_json(path, meta);
  } catch (const output::OutputError& e) {
    fmt::print(stderr, "macrostep: the run's metadata is not written either: {}\n", e.what());
  }
}

// Whether `a` and `b` name the same existing file (device and inode, so that "./x.toml",
// "x.toml" and a hard or symbolic link compare equal).
inline bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The result files of a run: `output_file`, or the configuration's default name (reference or
// not), and the metadata path beside it. Opens the CSV with `columns` into `csv`. Throws
// SetupError, before anything is written, if the name ends in .json, either file would
// overwrite the configuration, the metadata cannot be created, or the CSV cannot be created.
// With `resume`, the CSV is continued at its output position instead (CsvWriter::
// continue_file; checkpoint::CheckpointError if it does not fit).
inline void open_result_files(const config::RunConfig& config, bool reference,
                              const std::string& output_file,
                              const std::vector<std::string>& columns, std::string& csv_path,
                              std::string& json_path, std::optional<output::CsvWriter>& csv,
                              const checkpoint::Checkpoint* resume = nullptr) {
  csv_path = output_file.empty() ? config::default_output_file(config, reference) : output_file;
  json_path = output::metadata_path(csv_path);
  if (json_path == csv_path) {
    throw SetupError(fmt::format("output file {} must not end in .json", csv_path));
  }
  for (const std::string& path : {csv_path, json_path}) {
    if (same_file(path, config.path)) {
      throw SetupError(
          fmt::format("the result file {} is the configuration {} itself; choose "
                      "another --output or [output] file",
                      path, config.path));
    }
  }
  try {
    output::check_destination(csv_path, "the result");
    output::check_destination(json_path, "the run's metadata");
    if (resume == nullptr) {
      csv.emplace(csv_path, columns);
    } else {
      try {
        csv.emplace(output::CsvWriter::continue_file(csv_path, columns, resume->csv_bytes,
                                                     resume->csv_rows));
      } catch (const output::OutputError& e) {
        throw checkpoint::CheckpointError(
            fmt::format("the checkpoint's result file does not fit it: {}", e.what()));
      }
    }
  } catch (const output::OutputError& e) {
    throw SetupError(e.what());
  }
}

}  // namespace macrostep::schemes
