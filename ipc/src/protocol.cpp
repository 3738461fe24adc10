// The plain parts of the wire protocol (protocol.hpp): paths and inputs in a command, the
// feed-through block and the failure of a reply, the segment's regions.
#include "macrostep/ipc/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace macrostep::ipc {

void StepReply::set_feedthrough(std::span<const double> d) {
  if (d.size() > kMaxFeedthrough) {
    throw std::invalid_argument("StepReply: a feed-through block of " + std::to_string(d.size()) +
                                " values (at most " + std::to_string(kMaxFeedthrough) + ")");
  }
  feedthrough = static_cast<std::uint32_t>(d.size());
  std::copy(d.begin(), d.end(), data + output_offset(used_runs()));
}

void StepReply::set_samples(std::span<const double> times, std::span<const double> values) {
  const std::size_t per_time = std::min<std::size_t>(outputs, kMaxOutputs);
  if (times.size() > kMaxSamples || values.size() != times.size() * per_time) {
    throw std::invalid_argument("StepReply: " + std::to_string(times.size()) +
                                " output samples with " + std::to_string(values.size()) +
                                " values (at most " + std::to_string(kMaxSamples) + " times of " +
                                std::to_string(per_time) + " outputs)");
  }
  samples = static_cast<std::uint32_t>(times.size());
  std::copy(times.begin(), times.end(), data + sample_offset());
  std::copy(values.begin(), values.end(), data + sample_offset() + times.size());
}

void StepReply::set_failure(std::uint32_t run, std::string_view text, bool terminated) noexcept {
  status = terminated ? ReplyStatus::kTerminated : ReplyStatus::kFailed;
  failed_run = run;
  const std::size_t n = std::min(text.size(), kErrorCapacity - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

void StepCommand::set_inputs(std::span<const double> u) {
  if (u.size() > kMaxChannels) {
    throw std::invalid_argument("StepCommand: " + std::to_string(u.size()) +
                                " inputs to evaluate at (at most " + std::to_string(kMaxChannels) +
                                ")");
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

std::string region_name(std::string_view kind, std::size_t index) {
  return std::string(kind) + "." + std::to_string(index);
}

std::size_t config_region_bytes(std::size_t message_bytes) {
  return sizeof(ConfigBlock) + message_bytes;
}

SubsystemLayout subsystem_layout(std::size_t state_size, std::size_t config_bytes) {
  const auto round = [](std::size_t n) { return (n + 63) / 64 * 64; };
  SubsystemLayout l;
  l.state_offset = round(sizeof(SubsystemBlock));
  l.config_offset = l.state_offset + round(std::max<std::size_t>(1, state_size) * sizeof(double));
  l.bytes = l.config_offset + config_region_bytes(config_bytes);
  return l;
}

void write_message(ConfigBlock& block, const std::vector<std::byte>& message) {
  if (message.size() > block.capacity) {
    throw std::runtime_error("control message of " + std::to_string(message.size()) +
                             " bytes does not fit its region of " + std::to_string(block.capacity) +
                             " bytes");
  }
  std::memcpy(block.data(), message.data(), message.size());
  block.bytes.store(message.size(), std::memory_order_release);
}

std::int64_t monotonic_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace macrostep::ipc
