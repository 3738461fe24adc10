// Packing of the support points in a StepCommand (protocol.hpp).
#include <cmath>
#include <stdexcept>
#include <string>

#include "macrostep/worker/protocol.hpp"

namespace macrostep::worker {

using model::SupportPoints;

void StepCommand::add_points(const SupportPoints& p) {
  if (runs >= kMaxRuns) {
    throw std::invalid_argument("StepCommand: more than " + std::to_string(kMaxRuns) + " runs");
  }
  if (p.degree < 0 || p.degree > SupportPoints::kMaxDegree ||
      p.channels > SupportPoints::kMaxChannels) {
    throw std::invalid_argument("StepCommand: support points of degree " +
                                std::to_string(p.degree) + " with " + std::to_string(p.channels) +
                                " channels");
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
  ++runs;
}

void StepCommand::unpack_points(std::span<SupportPoints* const> out) const {
  if (runs > out.size() || runs > kMaxRuns) {
    throw std::runtime_error("step command with " + std::to_string(runs) + " runs (at most " +
                             std::to_string(std::min(out.size(), kMaxRuns)) + ")");
  }
  if (packed > kMaxRuns * kMaxPackedDoubles) {
    throw std::runtime_error("step command with " + std::to_string(packed) + " packed values");
  }
  std::size_t at = 0;
  // Reads the small integer at `at`; the range check also rejects NaN and fractions.
  auto count = [&](double v, int hi, const char* what) {
    if (!(v >= 0.0 && v <= hi && v == std::floor(v))) {
      throw std::runtime_error(std::string("step command: bad ") + what + " " + std::to_string(v));
    }
    return static_cast<int>(v);
  };
  for (std::size_t r = 0; r < runs; ++r) {
    if (at + 3 > packed) throw std::runtime_error("step command: packed support points truncated");
    SupportPoints p{};
    p.degree = count(points[at], SupportPoints::kMaxDegree, "degree");
    p.channels = static_cast<std::uint32_t>(
        count(points[at + 1], static_cast<int>(SupportPoints::kMaxChannels), "channel count"));
    p.step_begin = points[at + 2];
    at += 3;
    const std::size_t n = p.node_count();
    if (at + n * (1 + p.channels) > packed) {
      throw std::runtime_error("step command: packed support points truncated");
    }
    for (std::size_t j = 0; j < n; ++j) p.time[j] = points[at++];
    for (std::size_t c = 0; c < p.channels; ++c) {
      for (std::size_t j = 0; j < n; ++j) p.value[c][j] = points[at++];
    }
    *out[r] = p;
  }
  if (at != packed) {
    throw std::runtime_error("step command: " + std::to_string(packed - at) +
                             " packed values left over");
  }
}

}  // namespace macrostep::worker
