// The files of a run (result_files.hpp).
#include "result_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "elapsed.hpp"
#include "macrostep/output/metadata.hpp"
#include "run_checkpoints.hpp"
#include "run_json.hpp"
#include "run_metadata.hpp"

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

bool exists(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ignored));
}

// A checkpoint that an earlier run of the result `result_path` wrote (it names the result).
bool checkpoint_of(const std::string& path, const std::string& result_path) {
  try {
    return output::same_path(checkpoint::read(path).csv_path, result_path);
  } catch (const std::exception&) {
    return false;
  }
}

bool listed(const output::RecordedRun& run, const std::string& role, const std::string& path) {
  return std::any_of(run.files.begin(), run.files.end(), [&](const output::Destination& d) {
    return d.role == role && output::same_path(d.path, path);
  });
}

// Why the existing file `path` is not part of the earlier result `result_path`, judged by what
// is at its metadata path `json_path` (`before`; empty beside a character device).
std::string not_ours(const output::RecordedRun& before, const std::string& path,
                     const std::string& json_path, const std::string& result_path) {
  const bool self = path == json_path;
  if (json_path.empty())
    return fmt::format("no earlier run of the result {} wrote it", result_path);
  if (!before.exists) {
    return fmt::format("it is not {} of macrostep: no metadata {} beside it",
                       path == result_path ? "a result" : "part of a result", json_path);
  }
  if (!before.macrostep) {
    return self ? "it is not the metadata of a macrostep result"
                : fmt::format("{} beside it is not the metadata of a macrostep result", json_path);
  }
  const std::string described = before.path_of(kResultRole);
  if (!output::same_path(described, result_path)) {
    std::error_code ignored;  // the path as the working directory sees it
    const std::string shown = std::filesystem::proximate(described, ignored).string();
    return fmt::format("{} describes the result {}, not {}",
                       self ? "it" : "its metadata " + json_path, shown.empty() ? described : shown,
                       result_path);
  }
  return fmt::format(
      "it is not among the files of the earlier result {} (its metadata {} lists them)",
      result_path, json_path);
}

}  // namespace

// The rule (header): an existing file is replaced only as part of an earlier result of the same
// file and kind of run, which its metadata vouches for. A checkpoint vouches for itself (the
// metadata lists one that a run only planned): it must name this result. Anything else is
// refused: losing a user's file to a run is worse than asking for another name.
void ResultFiles::check_replaceable(const std::string& role, const std::string& path) const {
  if (!exists(path) || output::Destinations::is_special(path)) return;
  if (role == kCheckpointRole || role == kStateFilesRole) {
    const bool checkpoint = role == kCheckpointRole;
    if (checkpoint ? checkpoint_of(path, result_path_) : StateFiles::holds_only_state_files(path))
      return;
    if (request_.replace_files) return;
    throw SetupError(fmt::format(
        "{}: {} would replace this existing file, but it is not {} of the result {}; name "
        "another with --checkpoint, or remove it first",
        path, role, checkpoint ? "a checkpoint" : "the state files of a checkpoint", result_path_));
  }
  // Resuming continues the checkpoint's own CSVs: it checks their content against its hash.
  if (request_.resume != nullptr && (role == kResultRole || role == kStepsRole)) return;
  const output::RecordedRun& before = previous_;
  const std::string mode = config::to_string(request_.kind);
  const std::string described = before.path_of(kResultRole);
  const bool ours =
      before.macrostep && !described.empty() && output::same_path(described, result_path_);
  const char* fix = "name another file with --output, or remove it first";
  if (ours && before.mode != mode) {
    throw SetupError(fmt::format(
        "{}: {} the result of a {} run (its metadata {} says so); this {} run does not overwrite "
        "it: {}",
        path, path == result_path_ ? "holds" : "belongs to", before.mode, json_path_, mode, fix));
  }
  // Replacing files unasked still keeps another result's metadata (r.json of r.h5 for r.csv).
  const bool others = before.macrostep && !described.empty() && !ours;
  if ((ours && listed(before, role, path)) || (request_.replace_files && !others)) return;
  throw SetupError(fmt::format("{}: {} would replace this existing file, but {}; {}", path, role,
                               not_ours(before, path, json_path_, result_path_), fix));
}

void ResultFiles::add(const std::string& role, const std::string& path, bool directory) {
  try {
    destinations_.add(role, path, directory);
  } catch (const output::OutputError& e) {
    throw SetupError(e.what());
  }
  check_replaceable(role, path);
}

ResultFiles::ResultFiles(const Request& r)
    : destinations_(config::input_files(*r.config)), request_(r) {
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
    previous_ = output::recorded_run(json_path_);
  }
  if (h5 && (r.resume != nullptr || r.checkpointed)) {
    throw SetupError(fmt::format(
        "{}: checkpoints continue CSV results only; write the checkpointed run to a .csv",
        result_path_));
  }
  if (!h5) {
    try {  // a column name a CSV header cannot hold (a model's output named "v,w")
      output::CsvWriter::check_column_names(r.columns);
    } catch (const std::invalid_argument& e) {
      throw SetupError(fmt::format("{}: {}", result_path_, e.what()));
    }
  }
  add(kResultRole, result_path_);
  if (!json_path_.empty()) add(output::kMetadataRole, json_path_);
  if (!steps_path_.empty() && !h5) add(kStepsRole, steps_path_);
}

namespace {

nlohmann::ordered_json files_json(const output::Destinations& destinations) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const output::Destination& d : destinations.list()) {
    files.push_back({{"role", d.role}, {"path", d.path}, {"directory", d.directory}});
  }
  return files;
}

}  // namespace

// The result file and the metadata document beside it before open() wrote anything.
struct ResultFiles::FileBefore {
  bool result_exists = false;
  std::uintmax_t result_size = 0;
  std::filesystem::file_time_type result_time;
  // None: no file, or not JSON. Written back through write_json, which gives the same bytes for
  // a document that write_json made: the only kind a run replaces unless its caller asked for
  // existing files to be replaced (Request::replace_files), when any JSON comes back reformatted.
  std::optional<nlohmann::ordered_json> metadata;
};

void ResultFiles::open() {
  namespace fs = std::filesystem;
  const bool claims = !json_path_.empty() && request_.resume == nullptr;
  FileBefore before;
  std::error_code ec;
  if (claims && fs::is_regular_file(result_path_, ec)) {
    before.result_exists = true;
    before.result_size = fs::file_size(result_path_, ec);
    before.result_time = fs::last_write_time(result_path_, ec);
  }
  if (claims && fs::is_regular_file(json_path_, ec)) {
    std::ifstream in(json_path_);
    before.metadata = nlohmann::ordered_json::parse(in, nullptr, false);
    if (before.metadata->is_discarded()) before.metadata.reset();
  }
  bool claimed = false;
  try {
    if (!special_) lock_ = output::WriteLock(result_path_);
    // The metadata claims the files before they are written ("status": "running"; the run
    // replaces it), so that the files of a run that was killed (SIGKILL, a power cut) are still
    // its result's for a rerun (check_replaceable). Resuming keeps the interrupted run's until
    // the end: its files are the checkpoint's, and a checkpoint that does not fit loses nothing.
    if (!json_path_.empty() && request_.resume == nullptr) {
      output::write_json(json_path_, {{"mode", config::to_string(request_.kind)},
                                      {"status", "running"},
                                      {"files", files_json(destinations_)}});
      claimed = true;
    }
    if (output::is_hdf5_path(result_path_)) {
      open_hdf5(request_);
    } else {
      open_csv(request_);
    }
  } catch (const std::exception& e) {
    if (claimed) undo_claim(before, e);
    if (dynamic_cast<const output::OutputError*>(&e) != nullptr) throw SetupError(e.what());
    throw;
  }
}

void ResultFiles::undo_claim(const FileBefore& before, const std::exception& error) noexcept {
  namespace fs = std::filesystem;
  try {
    results_ = nullptr;
    steps_ = nullptr;
    csv_.reset();
    steps_csv_.reset();
    h5_.reset();
    std::error_code ec;
    const bool untouched =
        before.result_exists
            ? fs::file_size(result_path_, ec) == before.result_size &&
                  fs::last_write_time(result_path_, ec) == before.result_time
            : !fs::exists(result_path_, ec) || fs::file_size(result_path_, ec) == 0;
    if (!untouched) {
      output::write_json(json_path_, document({{"mode", config::to_string(request_.kind)},
                                               {"status", "failed"},
                                               {"error", failure_json(error)}}));
      return;
    }
    if (!before.result_exists) fs::remove(result_path_, ec);
    if (before.metadata) {
      output::write_json(json_path_, *before.metadata);
    } else {
      fs::remove(json_path_, ec);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "macrostep: {}: could not put the files back after the error: {}\n",
               json_path_, e.what());
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

}  // namespace

// "files" is every destination the run's path checks saw, so that what a run may write is read
// off the code that checks it.
nlohmann::ordered_json ResultFiles::document(const nlohmann::ordered_json& meta) const {
  nlohmann::ordered_json out = meta;
  out["columns"] = output::columns_json(request_.columns, request_.units, request_.descriptions);
  out["files"] = files_json(destinations_);
  return out;
}

void ResultFiles::write_metadata(const nlohmann::ordered_json& meta) {
  const nlohmann::ordered_json full = document(meta);
  if (!json_path_.empty()) output::write_json(json_path_, full);
  if (h5_) {
    h5_->write_metadata(full, scalar_attributes(full));
    h5_->close();
  }
}

void ResultFiles::write_metadata_after_failure(const nlohmann::ordered_json& meta) {
  const nlohmann::ordered_json full = document(meta);
  if (!json_path_.empty()) write_json_after_failure(json_path_, full);
  if (!h5_) return;
  try {
    h5_->write_metadata(full, scalar_attributes(full));
    h5_->close();
  } catch (const output::OutputError& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
  }
}

}  // namespace macrostep::run
