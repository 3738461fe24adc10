// The files of a run (result_files.hpp).
#include "result_files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "elapsed.hpp"
#include "macrostep/output/metadata.hpp"
#include "run_json.hpp"

namespace macrostep::run {

SchemeColumns scheme_columns(config::CosimScheme scheme) {
  switch (scheme) {
    case config::CosimScheme::kAuto:
      return SchemeColumns::kKindAndMismatch;
    case config::CosimScheme::kSemiImplicit:
      return SchemeColumns::kMismatch;
    default:
      return SchemeColumns::kNone;
  }
}

namespace {

std::size_t scheme_column_count(SchemeColumns scheme) {
  return scheme == SchemeColumns::kKindAndMismatch ? 3 : scheme == SchemeColumns::kMismatch ? 1 : 0;
}

}  // namespace

std::vector<std::string> steps_columns(std::size_t subsystems, SchemeColumns scheme) {
  std::vector<std::string> c{"t_start",          "h",     "kappa", "accepted", "error_estimate",
                             "corrector_passes", "wall_s"};
  for (std::size_t i = 1; i <= subsystems; ++i) c.push_back(fmt::format("solver_s_{}", i));
  for (std::size_t i = 1; i <= subsystems; ++i) c.push_back(fmt::format("idle_s_{}", i));
  if (scheme == SchemeColumns::kKindAndMismatch) {
    c.emplace_back("implicit");
    c.emplace_back("semi_implicit");
  }
  if (scheme != SchemeColumns::kNone) c.emplace_back("coupling_mismatch");
  c.emplace_back("executor_s");
  for (std::size_t i = 1; i <= subsystems; ++i) c.push_back(fmt::format("extra_runs_{}", i));
  for (std::size_t i = 1; i <= subsystems; ++i) c.push_back(fmt::format("extra_s_{}", i));
  return c;
}

void steps_row(const schemes::StepRecord& r, SchemeColumns scheme, std::vector<double>& values) {
  const std::size_t n = r.solver_ns.size();
  const std::size_t trace = 7 + 2 * n + scheme_column_count(scheme);
  values.resize(trace + 1 + 2 * n);
  values[0] = r.plan.t_begin;
  values[1] = r.plan.h();
  values[2] = r.plan.kappa;
  values[3] = r.accepted ? 1.0 : 0.0;
  values[4] = r.error_estimate;
  values[5] = r.corrector_passes;
  values[6] = seconds(r.wall_ns);
  for (std::size_t i = 0; i < n; ++i) {
    values[7 + i] = seconds(r.solver_ns[i]);
    values[7 + n + i] = seconds(r.wall_ns - r.solver_ns[i]);
  }
  if (scheme == SchemeColumns::kKindAndMismatch) {
    values[7 + 2 * n] = r.iterative && !r.semi_implicit ? 1.0 : 0.0;
    values[8 + 2 * n] = r.semi_implicit ? 1.0 : 0.0;
  }
  if (scheme != SchemeColumns::kNone) values[trace - 1] = r.coupling_mismatch;
  values[trace] = seconds(r.executor_ns);
  for (std::size_t i = 0; i < n; ++i) {
    values[trace + 1 + i] = i < r.extra_runs.size() ? static_cast<double>(r.extra_runs[i]) : 0.0;
    values[trace + 1 + n + i] = i < r.extra_ns.size() ? seconds(r.extra_ns[i]) : 0.0;
  }
}

std::string steps_path(const std::string& result_path) {
  return std::filesystem::path(result_path).replace_extension(".steps.csv").string();
}

namespace {

std::vector<output::Destination> inputs_of(const config::RunConfig& config) {
  std::vector<output::Destination> inputs;
  for (config::InputFile& f : config::input_files(config)) {
    inputs.push_back({std::move(f.role), std::move(f.path)});
  }
  return inputs;
}

// A result of another kind of run (its metadata's "mode") is not overwritten: the user compares
// such results, and losing one to a default file name goes unnoticed until the comparison.
void check_kind(const std::string& result_path, config::ResultKind kind) {
  const std::string recorded = output::recorded_mode(result_path);
  const std::string mode = config::to_string(kind);
  if (recorded.empty() || recorded == mode) return;
  throw SetupError(
      fmt::format("{}: holds the result of a {} run (its metadata {} says so); this {} run does "
                  "not overwrite it: name another file with --output, or remove it first",
                  result_path, recorded, output::metadata_path(result_path), mode));
}

}  // namespace

ResultFiles::ResultFiles(const Request& r) : destinations_(inputs_of(*r.config)) {
  const config::RunConfig& config = *r.config;
  result_path_ =
      r.output_file.empty() ? config::default_output_file(config, r.kind) : r.output_file;
  const bool h5 = output::is_hdf5_path(result_path_);
  // A character device (/dev/null) takes the result alone: nothing is derived from its name.
  special_ = output::Destinations::is_special(result_path_);
  const bool special = special_;
  if (h5 && special) {
    throw SetupError(fmt::format("{}: an HDF5 result needs a regular file", result_path_));
  }
  if (!special) {
    json_path_ = output::metadata_path(result_path_);
    if (json_path_ == result_path_) {
      throw SetupError(fmt::format("output file {} must not end in .json", result_path_));
    }
    if (r.step_subsystems > 0) steps_path_ = h5 ? result_path_ : run::steps_path(result_path_);
  }
  if (h5 && (r.resume != nullptr || r.checkpointed)) {
    throw SetupError(fmt::format(
        "{}: checkpoints continue CSV results only; write the checkpointed run to a .csv",
        result_path_));
  }
  if (!special) check_kind(result_path_, r.kind);
  try {
    destinations_.add("the result", result_path_);
    if (!json_path_.empty()) destinations_.add("the run's metadata", json_path_);
    if (!steps_path_.empty() && !h5) destinations_.add("the steps table", steps_path_);
  } catch (const output::OutputError& e) {
    throw SetupError(e.what());
  }
  request_ = r;
}

void ResultFiles::open() {
  try {
    if (output::is_hdf5_path(result_path_)) {
      open_hdf5(request_);
    } else {
      open_csv(request_);
    }
  } catch (const output::OutputError& e) {
    throw SetupError(e.what());
  }
}

void ResultFiles::open_csv(const Request& r) {
  const std::vector<std::string> step_columns =
      r.step_subsystems > 0 ? steps_columns(r.step_subsystems, r.scheme_columns)
                            : std::vector<std::string>{};
  if (r.resume == nullptr) {
    csv_.emplace(result_path_, r.columns);
    if (!steps_path_.empty()) steps_csv_.emplace(steps_path_, step_columns, "attempt");
  } else {
    try {
      csv_.emplace(output::CsvWriter::continue_file(result_path_, r.columns, r.resume->csv_bytes,
                                                    r.resume->csv_rows, r.resume->csv_hash));
      if (!steps_path_.empty()) {
        steps_csv_.emplace(output::CsvWriter::continue_file(
            steps_path_, step_columns, r.resume->steps_bytes, r.resume->steps_rows,
            r.resume->steps_hash, "attempt"));
      }
    } catch (const output::OutputError& e) {
      throw checkpoint::CheckpointError(
          fmt::format("the checkpoint's result file does not fit it: {}", e.what()));
    }
  }
  results_ = &*csv_;
  if (steps_csv_) steps_ = &*steps_csv_;
}

void ResultFiles::open_hdf5(const Request& r) {
  h5_ = std::make_unique<output::Hdf5File>(result_path_);
  // The key column's entry first, one per column after it.
  const auto with_key = [&](const std::vector<std::string>& labels, const char* key) {
    std::vector<std::string> out;
    if (labels.empty()) return out;
    out = {key};
    out.insert(out.end(), labels.begin(), labels.end());
    out.resize(r.columns.size() + 1);
    return out;
  };
  results_ = &h5_->add_table("results", "time", r.columns, with_key(r.units, "s"),
                             with_key(r.descriptions, "time"));
  if (r.step_subsystems > 0) {
    steps_ =
        &h5_->add_table("steps", "attempt", steps_columns(r.step_subsystems, r.scheme_columns));
  }
}

void ResultFiles::close_tables() {
  if (csv_) csv_->close();
  if (steps_csv_) steps_csv_->close();
}

namespace {

// The scalar attributes of an HDF5 result: "status", and the numbers, strings and bools directly
// in "statistics", "time" and "simulation" as "<object>.<key>".
nlohmann::ordered_json scalar_attributes(const nlohmann::ordered_json& meta) {
  nlohmann::ordered_json scalars = nlohmann::ordered_json::object();
  if (meta.contains("status")) scalars["status"] = meta["status"];
  for (const char* group : {"simulation", "statistics", "time"}) {
    if (!meta.contains(group) || !meta[group].is_object()) continue;
    for (const auto& [key, value] : meta[group].items()) {
      if (value.is_primitive() && !value.is_null()) {
        scalars[fmt::format("{}.{}", group, key)] = value;
      }
    }
  }
  return scalars;
}

// The metadata with "columns" (every result column's name and unit) and "files": every
// destination the run's path checks saw, so that what a run may write is read off the code that
// checks it.
nlohmann::ordered_json with_files(const nlohmann::ordered_json& meta,
                                  const output::Destinations& destinations,
                                  const ResultFiles::Request& request) {
  nlohmann::ordered_json out = meta;
  out["columns"] = output::columns_json(request.columns, request.units, request.descriptions);
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const output::Destination& d : destinations.list()) {
    files.push_back({{"role", d.role}, {"path", d.path}, {"directory", d.directory}});
  }
  out["files"] = std::move(files);
  return out;
}

}  // namespace

void ResultFiles::write_metadata(const nlohmann::ordered_json& document) {
  const nlohmann::ordered_json meta = with_files(document, destinations_, request_);
  if (!json_path_.empty()) output::write_json(json_path_, meta);
  if (h5_) {
    h5_->write_metadata(meta, scalar_attributes(meta));
    h5_->close();
  }
}

void ResultFiles::write_metadata_after_failure(const nlohmann::ordered_json& document) {
  const nlohmann::ordered_json meta = with_files(document, destinations_, request_);
  if (!json_path_.empty()) write_json_after_failure(json_path_, meta);
  if (!h5_) return;
  try {
    h5_->write_metadata(meta, scalar_attributes(meta));
    h5_->close();
  } catch (const output::OutputError& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
  }
}

}  // namespace macrostep::run
