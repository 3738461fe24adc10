// The hot-path messages between the master and a subsystem process (the wire protocol), and the
// layout of the shared-memory segment of a process run (DESIGN.md data flow, contracts 1 and 3).
// Plain data only: this header knows no subsystem type. How a runner's polynomials and results
// are written into these messages and read back (the one encoder and decoder) is
// subsystems/worker/.../wire.hpp, which the worker, the node agent and the executors share.
//
// Segment layout (regions by name, I = 0-based subsystem index; one region per subsystem, so
// that a segment's region table holds runs of up to kMaxRegions - 2 subsystems):
//   "ms.run"        RunBlock: protocol version, subsystem count, master pid, and the two words
//                   every process of the run waits on: the command bell (the workers) and the
//                   reply counter (the master)
//   "ms.bye"        ConfigBlock header + the Cap'n Proto Shutdown (reason), written by the
//                   master before it sends kShutdown; workers read it when they get kShutdown
//   "ms.sub.I"      SubsystemBlock (below), then the mirrored state z (state_offset: doubles,
//                   written by the worker when it handles kAccept, before it replies), then a
//                   ConfigBlock with the Cap'n Proto SubsystemConfig (config_offset), written by
//                   the master before it spawns the worker. The block holds the command ring
//                   (master -> worker), the reply ring (worker -> master, exactly one reply per
//                   command) and the handshake (ConfigBlock + Cap'n Proto Handshake, written by the
//                   worker once it is ready or has failed to start).
//
// Every command gets exactly one reply, in order. At most two commands are in flight per worker
// (a queued accept / reject and the next step), well below the ring capacity.
//
// Waking. The master pushes commands quietly (SpscRing::try_push_quiet) into every worker's
// command ring and then rings RunBlock::command_bell once: one FUTEX_WAKE wakes every sleeping
// worker, instead of one system call (and one wake-up preemption of the master) per worker. A
// worker sleeps on the bell, not on its ring's own word, and checks its own ring when woken (a
// worker without a new command sleeps again). The master raises RunBlock::replies' target by the
// number of commands before it pushes them; a worker pushes its reply quietly and then arrives
// at the counter, and only the reply that completes the target wakes the master: it sleeps once
// per batch, not once per worker. A worker killed while asleep on the bell leaves the bell's
// sleeper count one too high, which costs the master a spare FUTEX_WAKE per bell (not a lost
// wake-up): tolerated, as restarts are rare.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "macrostep/ipc/arrival_counter.hpp"
#include "macrostep/ipc/spsc_ring.hpp"

namespace macrostep::ipc {

// Raised whenever a message or the segment layout changes meaning; the master and its workers
// must agree on it (handshake, SubsystemConfig).
inline constexpr std::uint32_t kProtocolVersion = 11;
// The input polynomials a command carries: up to kMaxNodes support points (degree kMaxNodes - 1)
// for each of up to kMaxChannels inputs. They equal model::SupportPoints' capacities (wire.hpp
// checks it at compile time).
inline constexpr std::size_t kMaxNodes = 7;
inline constexpr std::size_t kMaxChannels = 8;
// Runs of one step: the nominal run, up to kMaxPolynomialRuns - 1 runs with their own polynomial
// (comparison runs) and perturbed runs, kMaxRuns in all: enough for one perturbed run per input in
// each direction (central differences, METHODS §4.2) beside a comparison run.
inline constexpr std::size_t kMaxPolynomialRuns = 4;
inline constexpr std::size_t kMaxRuns = 4 + 2 * kMaxChannels;
inline constexpr std::size_t kMaxOutputs = 8;
// The feed-through block of a reply: outputs × inputs of one subsystem.
inline constexpr std::size_t kMaxFeedthrough = kMaxOutputs * kMaxChannels;
// The output samples of a nominal run on the output grid (runner::RunResult::sample_times): at
// most this many grid times per macro step, so that a run with an output grid bounds its macro
// step to kMaxSamples output intervals (whatever the executor: contract 1).
inline constexpr std::size_t kMaxSamples = 512;
inline constexpr std::size_t kMaxSampleDoubles = kMaxSamples * (1 + kMaxOutputs);
inline constexpr std::size_t kErrorCapacity = 256;
// The work counters of one run (ida::AdvanceStats), carried as this many doubles' worth of bytes
// (wire.hpp checks that they fit).
inline constexpr std::size_t kStatsDoubles = 11;

enum class CommandKind : std::uint32_t {
  kStep = 1,      // a pass of the nominal and extra runs from T_N to t_end (any number per step)
  kAccept = 2,    // the nominal state at t_end becomes T_N: save snapshot, mirror z
  kReject = 3,    // restore the T_N snapshot
  kShutdown = 4,  // reply, then exit 0
  // Between steps: write the accepted workspace T_N to path() (SubsystemRunner::
  // export_state_to), or replace it by the one in path() (import_state_from; the state mirror is
  // updated). For checkpoints and for a restarted worker that continues a run.
  kExport = 5,
  kImport = 6,
  // After a kStep whose nominal run succeeded and before kAccept / kReject, any number of
  // times: the outputs and ∂y/∂u at the nominal end state with the inputs in inputs()
  // (SubsystemRunner::evaluate_outputs; no integration, no change of state). Its reply carries
  // one run with zero statistics, its outputs and the feed-through block
  // (worker/wire.hpp encode_evaluation); a model failure is a kFailed reply with the reason.
  kEvaluate = 7,
};

// The runs travel packed (only the used nodes and channels, and a perturbed run as two numbers),
// so that a command of a 2-input subsystem with κ = 2 and one comparison run is 4 cache lines.
// Packed form of a polynomial, in doubles:
//   degree, channels, step_begin, time[0..n), value[0][0..n), ..., value[channels-1][0..n)
// with n = degree + 1 (degree and channels are small integers, exact as doubles). A command is
// the nominal run's polynomial followed by every extra run as its role (a PackedRole as a
// double) and then, for kComparison, its polynomial, for kPerturbed, channel and end value.
// wire.hpp writes and reads this form; here it is only counted.
enum class PackedRole : std::uint32_t { kComparison = 1, kPerturbed = 2 };
inline constexpr std::size_t kMaxPackedDoubles = 3 + kMaxNodes * (1 + kMaxChannels);
inline constexpr std::size_t kMaxCommandDoubles =
    kMaxPolynomialRuns * kMaxPackedDoubles + (kMaxRuns - 1) + 2 * (kMaxRuns - kMaxPolynomialRuns);

struct StepCommand {
  CommandKind kind = CommandKind::kStep;
  std::uint32_t runs = 0;  // 1 + number of extra runs (kStep only)
  std::uint64_t id = 0;    // command id, echoed in the reply
  double t_end = 0.0;
  std::uint32_t packed = 0;       // doubles used in `points` (kStep only)
  std::uint32_t polynomials = 0;  // runs with their own polynomial, the nominal one included
  // kEvaluate: 1 evaluates the state after an event the nominal run handled at t_end, 0 the one
  // before it (runner::EventSide; the same state without such an event).
  std::uint32_t after_event = 0;
  std::uint32_t reserved = 0;
  double points[kMaxCommandDoubles];

  // Master: no runs (accept, reject, shutdown carry none).
  void clear_runs() noexcept {
    runs = 0;
    packed = 0;
    polynomials = 0;
  }

  // Master: a file path for kExport / kImport, carried in `points` (no runs). Throws
  // std::invalid_argument if it is empty, holds a NUL or does not fit.
  void set_path(const std::string& path);
  // Worker: the path of a kExport / kImport command; std::runtime_error if malformed.
  std::string path() const;

  // Master: the inputs of a kEvaluate command, carried in `points` (no runs). Throws
  // std::invalid_argument beyond kMaxChannels values.
  void set_inputs(std::span<const double> u);
  // Worker: the inputs of a kEvaluate command.
  std::span<const double> inputs() const noexcept {
    return {points, std::min<std::size_t>(packed, kMaxChannels)};
  }

  // Bytes sent through the ring: the header, and the packed runs, path or inputs.
  std::size_t wire_bytes() const noexcept {
    return offsetof(StepCommand, points) +
           (kind == CommandKind::kStep || kind == CommandKind::kExport ||
                    kind == CommandKind::kImport || kind == CommandKind::kEvaluate
                ? packed * sizeof(double)
                : 0);
  }
};

// kTerminated: failed because the model asked to end the simulation (the error says where).
enum class ReplyStatus : std::uint32_t { kOk = 0, kFailed = 1, kTerminated = 2 };

// The used part comes first: the fixed fields, then the runs' statistics and outputs packed in
// `data`; the error text (last) travels only with a failed reply.
struct StepReply {
  ReplyStatus status = ReplyStatus::kOk;
  std::uint32_t failed_run = 0;        // when failed: 0 nominal, 1 + k extra run k
  std::uint64_t id = 0;                // the command's id
  std::uint32_t runs = 0;              // runs reported in `data`
  std::uint32_t outputs = 0;           // values per run
  std::uint32_t feedthrough = 0;       // values of the nominal run's ∂y/∂u (0: no feed-through)
  std::uint32_t samples = 0;           // the nominal run's output samples (grid times)
  std::int64_t solver_ns = 0;          // nominal run
  std::int64_t extra_ns = 0;           // sum of the extra runs' wall times
  std::int64_t snapshot_ns_total = 0;  // accumulated saves/restores/clones of this worker
  // The work counters accumulated over every run of every integrator (wire.hpp reads them).
  double total[kStatsDoubles] = {};
  double time = 0.0;                 // the nominal integrator's time after the command
  std::uint64_t exported_bytes = 0;  // kExport: the size of the file written
  // CLOCK_MONOTONIC (steady_clock) when the worker got the command and pushed the reply.
  std::int64_t received_ns = 0;
  std::int64_t sent_ns = 0;
  // kStep: the nominal run's next scheduled time event after t_end (runner::RunResult::
  // next_event; +infinity: none), and its outputs after an event it handled at t_end
  // (RunResult::event_outputs: `event_outputs` values, 0 without such an event).
  double next_event = 0.0;
  std::uint32_t event_outputs = 0;
  std::uint32_t reserved = 0;
  double event_values[kMaxOutputs] = {};
  // runs × work counters (kStatsDoubles each), then runs × `outputs` values (y at t_end), then
  // the `feedthrough` values of the nominal run's ∂y/∂u, then the nominal run's `samples` grid
  // times and samples × `outputs` values. The writer sets `runs` and `outputs` first, then the
  // feed-through block, then the samples; runs <= kMaxRuns, outputs <= kMaxOutputs,
  // feedthrough <= kMaxFeedthrough, samples <= kMaxSamples.
  double data[kMaxRuns * (kStatsDoubles + kMaxOutputs) + kMaxFeedthrough + kMaxSampleDoubles];
  char error[kErrorCapacity] = {};  // NUL-terminated, when failed

  double* run_stats(std::size_t run) noexcept { return data + run * kStatsDoubles; }
  const double* run_stats(std::size_t run) const noexcept { return data + run * kStatsDoubles; }
  double* run_outputs(std::size_t run) noexcept { return data + output_offset(run); }
  const double* run_outputs(std::size_t run) const noexcept { return data + output_offset(run); }
  // The feed-through block (after `runs` and `outputs` are set). set_feedthrough throws
  // std::invalid_argument beyond kMaxFeedthrough values.
  void set_feedthrough(std::span<const double> d);
  std::span<const double> feedthrough_values() const noexcept {
    return {data + output_offset(used_runs()), std::min<std::size_t>(feedthrough, kMaxFeedthrough)};
  }
  // The output samples (after the feed-through block is set): times and, per time, `outputs`
  // values. set_samples throws std::invalid_argument beyond kMaxSamples times or for values that
  // are not times.size() × outputs.
  void set_samples(std::span<const double> times, std::span<const double> values);
  std::span<const double> sample_times() const noexcept {
    return {data + sample_offset(), used_samples()};
  }
  std::span<const double> sample_values() const noexcept {
    return {data + sample_offset() + used_samples(),
            used_samples() * std::min<std::size_t>(outputs, kMaxOutputs)};
  }
  // A failed reply: `status` kFailed (kTerminated with `terminated`), `failed_run` and the text
  // (cut to kErrorCapacity - 1).
  void set_failure(std::uint32_t run, std::string_view text, bool terminated = false) noexcept;

  std::size_t wire_bytes() const noexcept {
    return status == ReplyStatus::kOk
               ? offsetof(StepReply, data) +
                     (sample_offset() +
                      used_samples() * (1 + std::min<std::size_t>(outputs, kMaxOutputs))) *
                         sizeof(double)
               : sizeof(StepReply);
  }

 private:
  std::size_t used_runs() const noexcept { return std::min<std::size_t>(runs, kMaxRuns); }
  std::size_t used_samples() const noexcept { return std::min<std::size_t>(samples, kMaxSamples); }
  std::size_t sample_offset() const noexcept {
    return output_offset(used_runs()) + std::min<std::size_t>(feedthrough, kMaxFeedthrough);
  }
  std::size_t output_offset(std::size_t run) const noexcept {
    return used_runs() * kStatsDoubles + run * std::min<std::size_t>(outputs, kMaxOutputs);
  }
};

static_assert(std::is_trivially_copyable_v<StepCommand>);
static_assert(std::is_trivially_copyable_v<StepReply>);

using CommandRing = SpscRing<StepCommand, 4>;
using ReplyRing = SpscRing<StepReply, 4>;

struct RunBlock {
  std::uint32_t protocol_version = kProtocolVersion;
  std::uint32_t subsystems = 0;
  std::int32_t master_pid = 0;
  // Rung by the master after it pushed commands (quietly) to one or more workers; every worker
  // waits for its next command on it (see "Waking" above).
  WaitWord command_bell;
  // Every worker arrives once per reply, after pushing it; the master waits for its target.
  ArrivalCounter replies;
};

// A Cap'n Proto message in a region: `bytes` of flat-array words follow the header. The writer
// fills the words and then stores `bytes` with release; a reader that loads a non-zero value
// with acquire sees the complete message.
struct ConfigBlock {
  std::atomic<std::uint64_t> bytes{0};
  std::uint64_t capacity = 0;  // bytes available after the header
  alignas(8) std::byte reserved[48];
  std::byte* data() noexcept { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* data() const noexcept { return reinterpret_cast<const std::byte*>(this + 1); }
};
static_assert(sizeof(ConfigBlock) == 64);

inline constexpr std::size_t kHandshakeBytes = 4096;  // handshake header + message

// A worker's liveness counter, on a cache line of its own: the integrator of one run bumps it
// at every model evaluation (ida::Integrator::set_progress_counter), the master reads it while
// it waits for a reply; a counter that stands still for ProcessOptions::hang_timeout means the
// worker hangs (DESIGN.md contract 5).
struct alignas(kCacheLine) ProgressCounter {
  std::atomic<std::uint64_t> value{0};
};

// The fixed part of a subsystem's region "ms.sub.I". Offsets are from the segment's first byte.
struct SubsystemBlock {
  static constexpr std::uint64_t kMagic = 0x4b43'4f4c'4253'424eULL;
  std::uint64_t magic = kMagic;
  std::uint32_t protocol_version = kProtocolVersion;
  std::uint32_t command_size = sizeof(StepCommand);
  std::uint32_t reply_size = sizeof(StepReply);
  std::uint32_t reserved = 0;
  std::uint64_t state_offset = 0;  // double[state_size]
  std::uint64_t state_size = 0;
  std::uint64_t config_offset = 0;  // ConfigBlock
  CommandRing commands;
  ReplyRing replies;
  ProgressCounter progress[kMaxRuns];  // [0] nominal integrator, [1 + j] pool integrator j
  ConfigBlock handshake;
  std::byte handshake_data[kHandshakeBytes - sizeof(ConfigBlock)];
};

// Bytes of region "ms.sub.I" and the offsets inside it (from the region's first byte).
struct SubsystemLayout {
  std::size_t state_offset = 0, config_offset = 0, bytes = 0;
};
SubsystemLayout subsystem_layout(std::size_t state_size, std::size_t config_bytes);

// Region names.
std::string region_name(std::string_view kind, std::size_t index);

// The region bytes a Cap'n Proto message of `message_bytes` needs (ConfigBlock header + message).
std::size_t config_region_bytes(std::size_t message_bytes);

// Writes a message into a ConfigBlock (publishes `bytes` last). Throws std::runtime_error if it
// does not fit.
void write_message(ConfigBlock& block, const std::vector<std::byte>& message);

// CLOCK_MONOTONIC in nanoseconds (StepReply::received_ns / sent_ns, and the master's side of
// the same measurements).
std::int64_t monotonic_ns() noexcept;

}  // namespace macrostep::ipc
