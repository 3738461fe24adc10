// The runner's side of the wire protocol (wire.hpp): packing of the runs, the one reply encoder
// and its decoder.
#include "macrostep/worker/wire.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace macrostep::worker {

using model::SupportPoints;
using runner::ExtraRun;
using runner::RunRole;

namespace {

ida::AdvanceStats read_stats(const double* words) noexcept {
  ida::AdvanceStats s;
  std::memcpy(static_cast<void*>(&s), words, sizeof s);
  return s;
}

void write_stats(double* words, const ida::AdvanceStats& s) noexcept {
  std::memset(words, 0, ipc::kStatsDoubles * sizeof(double));
  std::memcpy(words, static_cast<const void*>(&s), sizeof s);
}

// Appends one polynomial in the packed form (protocol.hpp) at command.packed.
void append_polynomial(ipc::StepCommand& command, const SupportPoints& p) {
  if (p.degree < 0 || p.degree > SupportPoints::kMaxDegree ||
      p.channels > SupportPoints::kMaxChannels) {
    throw std::invalid_argument("StepCommand: support points of degree " +
                                std::to_string(p.degree) + " with " + std::to_string(p.channels) +
                                " channels");
  }
  if (command.polynomials >= ipc::kMaxPolynomialRuns) {
    throw std::invalid_argument("StepCommand: more than " +
                                std::to_string(ipc::kMaxPolynomialRuns) +
                                " runs with their own polynomial");
  }
  const std::size_t n = p.node_count();
  double* out = command.points + command.packed;
  *out++ = static_cast<double>(p.degree);
  *out++ = static_cast<double>(p.channels);
  *out++ = p.step_begin;
  for (std::size_t j = 0; j < n; ++j) *out++ = p.time[j];
  for (std::size_t c = 0; c < p.channels; ++c) {
    for (std::size_t j = 0; j < n; ++j) *out++ = p.value[c][j];
  }
  command.packed = static_cast<std::uint32_t>(out - command.points);
  ++command.polynomials;
}

void append_extra(ipc::StepCommand& command, const ExtraRun& run) {
  if (command.runs >= ipc::kMaxRuns) {
    throw std::invalid_argument("StepCommand: more than " + std::to_string(ipc::kMaxRuns) +
                                " runs");
  }
  if (run.role != RunRole::kComparison && run.role != RunRole::kPerturbed) {
    throw std::invalid_argument("StepCommand: unknown run role");
  }
  if (run.role == RunRole::kComparison) {
    // The role goes in front of the polynomial: undo it if the polynomial is refused.
    command.points[command.packed++] = static_cast<double>(run.role);
    try {
      append_polynomial(command, run.points);
    } catch (...) {
      --command.packed;
      throw;
    }
  } else {
    if (run.channel >= SupportPoints::kMaxChannels) {
      throw std::invalid_argument("StepCommand: perturbed run of channel " +
                                  std::to_string(run.channel));
    }
    command.points[command.packed++] = static_cast<double>(run.role);
    command.points[command.packed++] = static_cast<double>(run.channel);
    command.points[command.packed++] = run.end_value;
  }
  ++command.runs;
}

// Reads the packed runs of a command, checking every count against the data actually there.
class PackedReader {
 public:
  PackedReader(const double* data, std::size_t size) : data_(data), size_(size) {}

  // A small integer in [0, hi]; the range check also rejects NaN and fractions.
  int count(int hi, const char* what) {
    const double v = next();
    if (!(v >= 0.0 && v <= hi && v == std::floor(v))) {
      throw std::runtime_error(std::string("step command: bad ") + what + " " + std::to_string(v));
    }
    return static_cast<int>(v);
  }

  double next() {
    if (at_ >= size_) throw std::runtime_error("step command: packed runs truncated");
    return data_[at_++];
  }

  void polynomial(SupportPoints& p) {
    p = SupportPoints{};
    p.degree = count(SupportPoints::kMaxDegree, "degree");
    p.channels = static_cast<std::uint32_t>(
        count(static_cast<int>(SupportPoints::kMaxChannels), "channel count"));
    p.step_begin = next();
    const std::size_t n = p.node_count();
    if (at_ + n * (1 + p.channels) > size_) {
      throw std::runtime_error("step command: packed runs truncated");
    }
    for (std::size_t j = 0; j < n; ++j) p.time[j] = data_[at_++];
    for (std::size_t c = 0; c < p.channels; ++c) {
      for (std::size_t j = 0; j < n; ++j) p.value[c][j] = data_[at_++];
    }
  }

  std::size_t left() const { return size_ - at_; }

 private:
  const double* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// One run's counters and `outputs` values (zeros where the run has fewer).
void write_run(ipc::StepReply& reply, std::size_t run, const runner::RunResult& result,
               std::size_t outputs) {
  write_stats(reply.run_stats(run), result.stats);
  const std::size_t have = std::min(result.outputs.size(), outputs);
  double* out = reply.run_outputs(run);
  std::copy_n(result.outputs.begin(), have, out);
  std::fill(out + have, out + outputs, 0.0);
}

void read_run(const ipc::StepReply& reply, std::size_t run, std::size_t outputs,
              runner::RunResult& result) {
  result.outputs.assign(reply.run_outputs(run), reply.run_outputs(run) + outputs);
  result.stats = read_stats(reply.run_stats(run));
}

}  // namespace

void pack_runs(ipc::StepCommand& command, const SupportPoints& nominal,
               std::span<const ExtraRun> extra) {
  command.clear_runs();
  append_polynomial(command, nominal);
  command.runs = 1;
  for (const ExtraRun& run : extra) append_extra(command, run);
}

void unpack_runs(const ipc::StepCommand& command, SupportPoints& nominal,
                 std::vector<ExtraRun>& extra) {
  if (command.runs < 1 || command.runs > ipc::kMaxRuns) {
    throw std::runtime_error("step command with " + std::to_string(command.runs) + " runs (1 to " +
                             std::to_string(ipc::kMaxRuns) + ")");
  }
  if (command.packed > ipc::kMaxCommandDoubles) {
    throw std::runtime_error("step command with " + std::to_string(command.packed) +
                             " packed values");
  }
  PackedReader in(command.points, command.packed);
  in.polynomial(nominal);
  extra.resize(command.runs - 1);
  for (auto& run : extra) {
    const int role = in.count(static_cast<int>(RunRole::kPerturbed), "run role");
    if (role == static_cast<int>(RunRole::kComparison)) {
      run.role = RunRole::kComparison;
      run.channel = 0;
      run.end_value = 0.0;
      in.polynomial(run.points);
    } else if (role == static_cast<int>(RunRole::kPerturbed)) {
      run.role = RunRole::kPerturbed;
      run.channel = static_cast<std::uint32_t>(
          in.count(static_cast<int>(SupportPoints::kMaxChannels) - 1, "perturbed channel"));
      run.end_value = in.next();
    } else {
      throw std::runtime_error("step command: bad run role " + std::to_string(role));
    }
  }
  if (in.left() != 0) {
    throw std::runtime_error("step command: " + std::to_string(in.left()) +
                             " packed values left over");
  }
}

void encode_pass(const runner::RunResult& nominal, std::span<const runner::RunResult> extra,
                 std::size_t outputs, std::int64_t solver_ns, std::int64_t extra_ns,
                 ipc::StepReply& reply) {
  if (1 + extra.size() > ipc::kMaxRuns) {
    throw std::invalid_argument("StepReply: " + std::to_string(1 + extra.size()) + " runs");
  }
  if (outputs > ipc::kMaxOutputs) throw std::invalid_argument("StepReply: too many outputs");
  reply.runs = static_cast<std::uint32_t>(1 + extra.size());
  reply.outputs = static_cast<std::uint32_t>(outputs);
  write_run(reply, 0, nominal, outputs);
  for (std::size_t k = 0; k < extra.size(); ++k) write_run(reply, 1 + k, extra[k], outputs);
  reply.set_feedthrough(nominal.feedthrough);  // after runs and outputs: it follows them
  reply.set_samples(nominal.sample_times, nominal.sample_values);  // after the feed-through
  reply.next_event = nominal.next_event;
  if (!nominal.event_outputs.empty() && nominal.event_outputs.size() != outputs) {
    throw std::invalid_argument("StepReply: event outputs of another size than the outputs");
  }
  reply.event_outputs = static_cast<std::uint32_t>(nominal.event_outputs.size());
  std::copy(nominal.event_outputs.begin(), nominal.event_outputs.end(), reply.event_values);
  reply.solver_ns = solver_ns;
  reply.extra_ns = extra_ns;
}

void decode_pass(const ipc::StepReply& reply, std::size_t outputs, runner::PassResult& pass) {
  pass.solver_ns = reply.solver_ns;
  pass.extra_ns = reply.extra_ns;
  read_run(reply, 0, outputs, pass.nominal);
  const auto feedthrough = reply.feedthrough_values();
  pass.nominal.feedthrough.assign(feedthrough.begin(), feedthrough.end());
  const auto times = reply.sample_times();
  const auto values = reply.sample_values();
  pass.nominal.sample_times.assign(times.begin(), times.end());
  pass.nominal.sample_values.assign(values.begin(), values.end());
  pass.nominal.next_event = reply.next_event;
  pass.nominal.event_outputs.assign(
      reply.event_values,
      reply.event_values + std::min<std::size_t>(reply.event_outputs, ipc::kMaxOutputs));
  pass.extra.resize(reply.runs > 0 ? reply.runs - 1 : 0);
  for (std::size_t k = 0; k + 1 < reply.runs; ++k) read_run(reply, 1 + k, outputs, pass.extra[k]);
}

void encode_evaluation(std::span<const double> y, std::span<const double> d, std::string_view error,
                       ipc::StepReply& reply) {
  if (y.size() > ipc::kMaxOutputs) {
    throw std::invalid_argument("StepReply: " + std::to_string(y.size()) + " outputs (at most " +
                                std::to_string(ipc::kMaxOutputs) + ")");
  }
  reply.runs = 1;
  reply.outputs = static_cast<std::uint32_t>(y.size());
  write_stats(reply.run_stats(0), ida::AdvanceStats{});
  std::copy(y.begin(), y.end(), reply.run_outputs(0));
  reply.set_feedthrough(d);
  reply.samples = 0;
  if (!error.empty()) reply.set_failure(0, error);
}

void decode_evaluation(const ipc::StepReply& reply, std::size_t outputs, std::vector<double>& y,
                       std::vector<double>& d) {
  y.assign(reply.run_outputs(0), reply.run_outputs(0) + (reply.runs > 0 ? outputs : 0));
  const auto feedthrough = reply.feedthrough_values();
  d.assign(feedthrough.begin(), feedthrough.end());
}

void set_total_stats(ipc::StepReply& reply, const ida::AdvanceStats& total) noexcept {
  write_stats(reply.total, total);
}

ida::AdvanceStats total_stats(const ipc::StepReply& reply) noexcept {
  return read_stats(reply.total);
}

}  // namespace macrostep::worker
