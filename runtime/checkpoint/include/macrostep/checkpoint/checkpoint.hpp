// Co-simulation checkpoints: one file that holds the complete state of a run between
// two macro steps, so that `macrostep resume CHECKPOINT` continues it and writes the same CSV
// bytes as a run that was never interrupted (DESIGN.md contracts 1, 2).
//
// Contents (ipc/schema/checkpoint.capnp): the configuration text and the `run` arguments (resume
// needs nothing else), the output position (CSV byte offset and rows; resume cuts the CSV there
// and appends), the newest result row, the driver's step counters, the macro-step controller
// (control::MacroStepController::export_state), the scheme's arrays
// (schemes::MacroStepScheme::export_state), the stateful coupling laws' accepted state
// (system::CoupledSystem::export_law_states) and every subsystem's accepted IDA workspace
// (executors::Executor::export_state). The values are filled by the run driver
// (run/cosimulation.hpp); this library only writes and reads them.
//
// Writing is atomic: a temporary file beside the target ("<path>.tmp"), fsync, rename over the
// target, fsync of the directory. A reader therefore sees the previous checkpoint or the new
// one, never a mix, whatever kills the writer. Reading checks a frame (magic, format version, a
// hash of the body) before it reads anything else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace macrostep::checkpoint {

// Changes with any change of meaning of the file; read() accepts only this one. 2: the steps
// CSV's output position; 3: subsystem states are RunnerState messages (the IDA workspace and
// the accepted input polynomial); 4: the hashes of the CSV prefixes; 5: scheme auto's arrays
// hold three schemes (explicit, semi-implicit, implicit: schemes/adaptive.hpp); 6: the stateful
// coupling laws' accepted state; 7: the controller's order-change check (D-49); 8: an FMU mode
// carries its states' nominals (fmu/src/fmu_subsystem.hpp, FmuMode::serialize).
inline constexpr std::uint32_t kFormatVersion = 8;
// The largest checkpoint read() reads (it is read whole into memory): far above what a run of
// this machine's memory can export (a 3e6-mass chain's workspaces are about 1 GiB).
inline constexpr std::uint64_t kMaxFileBytes = 16ULL << 30;
// "MSTEPCKP" read as a little-endian 64-bit number: what marks a checkpoint file.
inline constexpr std::uint64_t kMagic = 0x504b434550545344ULL;

struct Checkpoint {
  std::string config_path;  // absolute
  std::string config_text;
  std::vector<std::string> arguments;  // the words after `macrostep run`
  std::string csv_path;                // absolute
  std::uint64_t csv_bytes = 0;
  std::uint64_t csv_rows = 0;
  std::uint64_t csv_hash = 0;  // output::fnv1a of the CSV's first csv_bytes bytes
  // The steps CSV beside it ("<stem>.steps.csv", one row per attempt): its output position.
  std::uint64_t steps_bytes = 0;
  std::uint64_t steps_rows = 0;
  std::uint64_t steps_hash = 0;
  std::vector<double> last_row;  // the result row of the newest accepted point
  double last_row_time = 0.0;
  bool last_row_pending = false;  // not in the CSV yet
  double time = 0.0;              // T_N
  std::uint64_t accepted_steps = 0;
  std::uint64_t rejected_steps = 0;
  std::vector<std::uint64_t> accepted_by_kappa;
  std::vector<double> time_by_kappa;
  std::vector<std::byte> controller;
  std::vector<std::vector<double>> scheme;
  std::vector<std::vector<std::byte>> subsystems;
  std::vector<std::vector<double>> laws;  // system::CoupledSystem::export_law_states
};

// A checkpoint that cannot be used: missing, unreadable, truncated, corrupted, of another format
// version, or (thrown by the run driver) not fitting its own configuration or result file. The
// message names the file and the reason; `macrostep resume` exits with status 2.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `c` to `path` atomically (see above). Throws std::runtime_error naming the path and
// the system's reason; the previous checkpoint at `path`, if any, is then left as it was.
void write(const std::string& path, const Checkpoint& c);

// The serialized file as write() produces it (tests build damaged files from it).
std::vector<std::byte> encode(const Checkpoint& c);

// Reads and checks the file: a regular file of at most kMaxFileBytes whose size is exactly that
// of the message its first words announce (nothing before or after it), with the frame checked
// before the body is read. Throws CheckpointError.
Checkpoint read(const std::string& path);

// The checks and decoding of read() on bytes already in memory (`path` names them in messages):
// at least 16 bytes of whole 8-byte words, exactly the message its segment table announces, the
// frame (magic, version, body hash) before the body. Throws CheckpointError; nothing else for
// any input (the fuzz target holds it to that).
Checkpoint decode(std::string_view bytes, const std::string& path);

// --checkpoint-every: "30" or "30s" (seconds of wall time, > 0; fractions allowed) or "500steps"
// (accepted macro steps, an integer >= 1). Throws std::invalid_argument naming the syntax, after
// `source` (the flag or the configuration key that gave the text).
struct Interval {
  double seconds = 0.0;     // > 0: by wall time
  std::uint64_t steps = 0;  // > 0: by accepted macro steps
};
Interval parse_interval(const std::string& text, std::string_view source = "--checkpoint-every");

// The default checkpoint beside a result file: "out.csv" -> "out.ckpt" (other names get
// ".ckpt" appended).
std::string default_path(const std::string& csv_path);

}  // namespace macrostep::checkpoint
