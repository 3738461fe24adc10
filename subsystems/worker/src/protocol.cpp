// Packing of the runs in a StepCommand (protocol.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "macrostep/worker/protocol.hpp"

namespace macrostep::worker {

using model::SupportPoints;
using runner::ExtraRun;
using runner::RunRole;

void StepCommand::append_polynomial(const SupportPoints& p) {
  if (p.degree < 0 || p.degree > SupportPoints::kMaxDegree ||
      p.channels > SupportPoints::kMaxChannels) {
    throw std::invalid_argument("StepCommand: support points of degree " +
                                std::to_string(p.degree) + " with " + std::to_string(p.channels) +
                                " channels");
  }
  if (polynomials >= kMaxPolynomialRuns) {
    throw std::invalid_argument("StepCommand: more than " + std::to_string(kMaxPolynomialRuns) +
                                " runs with their own polynomial");
  }
  const std::size_t n = p.node_count();
  double* out = points + packed;
  *out++ = static_cast<double>(p.degree);
  *out++ = static_cast<double>(p.channels);
  *out++ = p.step_begin;
  for (std::size_t j = 0; j < n; ++j) *out++ = p.time[j];
  for (std::size_t c = 0; c < p.channels; ++c) {
    for (std::size_t j = 0; j < n; ++j) *out++ = p.value[c][j];
  }
  packed = static_cast<std::uint32_t>(out - points);
  ++polynomials;
}

void StepCommand::set_nominal(const SupportPoints& p) {
  runs = 0;
  packed = 0;
  polynomials = 0;
  append_polynomial(p);
  runs = 1;
}

void StepCommand::add_extra(const ExtraRun& run) {
  if (runs == 0) throw std::logic_error("StepCommand::add_extra before set_nominal");
  if (runs >= kMaxRuns) {
    throw std::invalid_argument("StepCommand: more than " + std::to_string(kMaxRuns) + " runs");
  }
  if (run.role != RunRole::kComparison && run.role != RunRole::kPerturbed) {
    throw std::invalid_argument("StepCommand: unknown run role");
  }
  if (run.role == RunRole::kComparison) {
    // The role goes in front of the polynomial: undo it if the polynomial is refused.
    points[packed++] = static_cast<double>(run.role);
    try {
      append_polynomial(run.points);
    } catch (...) {
      --packed;
      throw;
    }
  } else {
    if (run.channel >= model::SupportPoints::kMaxChannels) {
      throw std::invalid_argument("StepCommand: perturbed run of channel " +
                                  std::to_string(run.channel));
    }
    points[packed++] = static_cast<double>(run.role);
    points[packed++] = static_cast<double>(run.channel);
    points[packed++] = run.end_value;
  }
  ++runs;
}

void StepReply::set_feedthrough(std::span<const double> d) {
  if (d.size() > kMaxFeedthrough) {
    throw std::invalid_argument("StepReply: a feed-through block of " + std::to_string(d.size()) +
                                " values (at most " + std::to_string(kMaxFeedthrough) + ")");
  }
  feedthrough = static_cast<std::uint32_t>(d.size());
  std::copy(d.begin(), d.end(), data + output_offset(used_runs()));
}

void StepReply::set_evaluation(std::span<const double> y, std::span<const double> d) {
  if (y.size() > kMaxOutputs) {
    throw std::invalid_argument("StepReply: " + std::to_string(y.size()) + " outputs (at most " +
                                std::to_string(kMaxOutputs) + ")");
  }
  runs = 1;
  outputs = static_cast<std::uint32_t>(y.size());
  set_run_stats(0, ida::AdvanceStats{});
  std::copy(y.begin(), y.end(), run_outputs(0));
  set_feedthrough(d);
}

void StepCommand::set_inputs(std::span<const double> u) {
  if (u.size() > model::SupportPoints::kMaxChannels) {
    throw std::invalid_argument("StepCommand: " + std::to_string(u.size()) +
                                " inputs to evaluate at (at most " +
                                std::to_string(model::SupportPoints::kMaxChannels) + ")");
  }
  clear_runs();
  std::copy(u.begin(), u.end(), points);
  packed = static_cast<std::uint32_t>(u.size());
}

void StepCommand::set_path(const std::string& path) {
  if (path.empty() || path.find('\0') != std::string::npos || path.size() + 1 > sizeof(points)) {
    throw std::invalid_argument(
        "StepCommand: a state file path must be non-empty, without NUL "
        "and shorter than " +
        std::to_string(sizeof(points)) + " bytes");
  }
  clear_runs();
  std::memset(points, 0, (path.size() + 1 + sizeof(double) - 1) / sizeof(double) * sizeof(double));
  std::memcpy(points, path.data(), path.size());
  packed = static_cast<std::uint32_t>((path.size() + 1 + sizeof(double) - 1) / sizeof(double));
}

std::string StepCommand::path() const {
  if (packed == 0 || packed > kMaxCommandDoubles) {
    throw std::runtime_error("state command without a path");
  }
  const char* text = reinterpret_cast<const char*>(points);
  const std::size_t n = strnlen(text, packed * sizeof(double));
  if (n == 0 || n == packed * sizeof(double)) {
    throw std::runtime_error("state command with a malformed path");
  }
  return std::string(text, n);
}

namespace {

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

}  // namespace

void StepCommand::unpack(SupportPoints& nominal, std::vector<ExtraRun>& extra) const {
  if (runs < 1 || runs > kMaxRuns) {
    throw std::runtime_error("step command with " + std::to_string(runs) + " runs (1 to " +
                             std::to_string(kMaxRuns) + ")");
  }
  if (packed > kMaxCommandDoubles) {
    throw std::runtime_error("step command with " + std::to_string(packed) + " packed values");
  }
  PackedReader in(points, packed);
  in.polynomial(nominal);
  extra.resize(runs - 1);
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

}  // namespace macrostep::worker
