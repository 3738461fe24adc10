// The checkpoints of a co-simulation run (run_checkpoints.hpp).
#include "run_checkpoints.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "macrostep/run/interrupt.hpp"
#include "run_json.hpp"

namespace macrostep::run {

std::string StateFiles::directory_of(const std::string& checkpoint_path) {
  return checkpoint_path + ".states";
}

StateFiles::StateFiles(const std::string& checkpoint_path)
    : directory_(directory_of(checkpoint_path)) {
  std::error_code error;
  std::filesystem::create_directory(directory_, error);
  if (error) {
    throw std::runtime_error(fmt::format("cannot create the directory {} for checkpoint states: {}",
                                         directory_, error.message()));
  }
}

StateFiles::~StateFiles() {
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string StateFiles::path(std::size_t subsystem) const {
  return fmt::format("{}/subsystem-{}.state", directory_, subsystem + 1);
}

bool StateFiles::holds_only_state_files(const std::string& directory) {
  std::error_code error;
  for (const auto& e : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !name.starts_with("subsystem-") ||
        name.find(".state") == std::string::npos) {
      return false;
    }
  }
  return !error;
}

RunCheckpoints::RunCheckpoints(std::string path, checkpoint::Interval every,
                               std::uint64_t accepted_so_far)
    : path_(std::move(path)),
      every_(every),
      last_accepted_(accepted_so_far),
      last_time_(std::chrono::steady_clock::now()) {}

bool RunCheckpoints::due(std::uint64_t accepted, bool stopping) const {
  if (stopping) return true;
  if (every_.steps == 0 && every_.seconds <= 0.0) return false;  // the final one only
  if (every_.steps > 0) return accepted >= last_accepted_ + every_.steps;
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - last_time_;
  return since.count() >= every_.seconds;
}

void RunCheckpoints::write(checkpoint::Checkpoint& c, std::uint64_t accepted,
                           const control::MacroStepController& controller,
                           const schemes::MacroStepScheme& scheme, executors::Executor& executor) {
  c.controller = controller.export_state();
  c.scheme = scheme.export_state();
  c.subsystems.resize(executor.subsystem_count());
  if (!files_) files_.emplace(path_);
  for (std::size_t i = 0; i < executor.subsystem_count(); ++i) {
    const std::string file = files_->path(i);
    executor.export_state(i, file);
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    if (!in.good() && !in.eof()) {
      throw std::runtime_error(
          fmt::format("checkpoint {}: cannot read the state of subsystem {}", path_, i + 1));
    }
    in.close();
    std::filesystem::remove(file);  // nothing of the state stays in $TMPDIR between checkpoints
    const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
    c.subsystems[i].assign(p, p + bytes.size());
  }
  checkpoint::write(path_, c);
  last_accepted_ = accepted;
  last_time_ = std::chrono::steady_clock::now();
}

void RunCheckpoints::between_steps(int signal, std::uint64_t accepted, double reached,
                                   const std::function<checkpoint::Checkpoint()>& describe,
                                   const control::MacroStepController& controller,
                                   const schemes::MacroStepScheme& scheme,
                                   executors::Executor& executor) {
  if (!due(accepted, signal != 0)) return;
  checkpoint::Checkpoint c = describe();
  if (signal == 0) {
    write(c, accepted, controller, scheme, executor);
    return;
  }
  try {
    write(c, accepted, controller, scheme, executor);
  } catch (const std::exception& e) {
    throw RunInterrupted(signal, reached, {}, e.what());
  }
  throw RunInterrupted(signal, reached, path_);
}

void restore_subsystems(const checkpoint::Checkpoint& c, const std::string& checkpoint_path,
                        executors::Executor& executor) {
  if (c.subsystems.size() != executor.subsystem_count()) {
    throw checkpoint::CheckpointError(
        fmt::format("{}: the checkpoint holds {} subsystems, its configuration has {}",
                    checkpoint_path, c.subsystems.size(), executor.subsystem_count()));
  }
  const StateFiles files(checkpoint_path + ".resume");  // beside the writer's own
  for (std::size_t i = 0; i < c.subsystems.size(); ++i) {
    const std::string file = files.path(i);
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(c.subsystems[i].data()),
               static_cast<std::streamsize>(c.subsystems[i].size()));
    try {
      executor.import_state(i, file);
    } catch (const std::exception& e) {
      throw checkpoint::CheckpointError(
          fmt::format("{}: the state of subsystem {} does not fit its configuration: {}",
                      checkpoint_path, i + 1, e.what()));
    }
  }
}

namespace {

// --checkpoint, or the default beside the CSV; with its state files' directory it joins the
// run's destinations (never the configuration, a result file or another output, nor an
// existing file that is not this result's: ResultFiles::add).
std::string checkpoint_path(const CosimSettings& settings, ResultFiles& files) {
  if (settings.checkpoint_path.empty() && output::Destinations::is_special(files.result_path())) {
    throw SetupError(fmt::format(
        "the result {} is not a file to put a checkpoint beside; name it with --checkpoint",
        files.result_path()));
  }
  const std::string path = settings.checkpoint_path.empty()
                               ? checkpoint::default_path(files.result_path())
                               : settings.checkpoint_path;
  files.add(kCheckpointRole, path);
  files.add(kStateFilesRole, StateFiles::directory_of(path), true);
  return path;
}

}  // namespace

std::optional<CheckpointPlan> planned_checkpoints(const CosimSettings& settings, ResultFiles& files,
                                                  std::string& none) {
  if (settings.checkpoint_every) {
    return CheckpointPlan{checkpoint_path(settings, files), *settings.checkpoint_every};
  }
  if (!settings.no_final_checkpoint.empty()) {
    none = "checkpoints do not work with " + settings.no_final_checkpoint;
  } else if (!files.writes_csv()) {
    none = "checkpoints continue CSV results only";
  } else {
    try {
      return CheckpointPlan{checkpoint_path(settings, files), checkpoint::Interval{}};
    } catch (const SetupError& e) {
      none = e.what();
    }
  }
  return std::nullopt;
}

checkpoint::Checkpoint CheckpointWriter::describe() const {
  const config::RunConfig& config = config_;
  const CosimOptions& options = options_;
  const ResultFiles& files = files_;
  const ResultRow& row = table_.row();
  const RunTally& counts = tally_;
  const double reached = tally_.reached;
  checkpoint::Checkpoint c;
  c.last_row = row.values;
  c.last_row_time = row.time;
  c.last_row_pending = row.pending;
  c.time = reached;
  c.laws = system_.export_law_states();
  c.accepted_steps = counts.accepted;
  c.rejected_steps = counts.rejected;
  c.accepted_by_kappa.assign(counts.by_kappa.begin(), counts.by_kappa.end());
  c.time_by_kappa.assign(counts.time_by_kappa.begin(), counts.time_by_kappa.end());
  c.config_path = std::filesystem::absolute(config.path).string();
  c.config_text = config.text;
  c.arguments = options.arguments;
  c.csv_path = std::filesystem::absolute(files.result_path()).string();
  // ResultFiles refuses checkpoints of an HDF5 result: both CSVs exist here.
  c.csv_bytes = files.results_csv()->bytes();
  c.csv_rows = files.results_csv()->rows();
  c.csv_hash = files.results_csv()->content_hash();
  c.steps_bytes = files.steps_csv()->bytes();
  c.steps_rows = files.steps_csv()->rows();
  c.steps_hash = files.steps_csv()->content_hash();
  return c;
}

void CheckpointWriter::between_steps(const BetweenSteps& at) {
  if (at.controller.finished()) return;
  // Throws RunInterrupted after a final checkpoint (a signal).
  checkpoints_.between_steps(
      at.stop_signal, tally_.accepted, tally_.reached, [this] { return describe(); }, at.controller,
      at.scheme, at.executor);
}

}  // namespace macrostep::run
