// Worker processes and the subsystem groups they host (placement.hpp: ProcessCount,
// process_groups).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "macrostep/placement/placement.hpp"

namespace macrostep::placement {

const char* const kProcessCountValues = "an integer >= 1, \"auto\" or \"per-subsystem\"";

std::string ProcessCount::to_string() const {
  switch (kind) {
    case Kind::kPerSubsystem:
      return "per-subsystem";
    case Kind::kAuto:
      return "auto";
    case Kind::kCount:
      break;
  }
  return std::to_string(count);
}

ProcessCount parse_process_count(std::string_view text) {
  if (text == "per-subsystem") return {};
  if (text == "auto") return {ProcessCount::Kind::kAuto, 0};
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 1000000) {
    throw std::invalid_argument(
        fmt::format("must be {} (got \"{}\")", kProcessCountValues, std::string(text)));
  }
  return {ProcessCount::Kind::kCount, n};
}

std::size_t resolve_process_count(const ProcessCount& count, std::size_t subsystems,
                                  const Topology& topology) {
  switch (count.kind) {
    case ProcessCount::Kind::kPerSubsystem:
      return subsystems;
    case ProcessCount::Kind::kAuto: {
      // The master keeps a core: subsystems that fit on the others keep a process each (their
      // runs compute in parallel); more subsystems are grouped on every core but one, so that
      // master and workers wait by spinning instead of sleeping (worker::worker_wait_policy):
      // the futex wake-ups of more processes than cores were the per-step overhead, also for 2
      // subsystems on 2 cores (docs/results/2026-12-04-two-subsystems-one-process.md). A
      // group's subsystems still run in parallel on its TBB arena.
      const std::size_t cores = std::max<std::size_t>(1, topology.cores());
      return subsystems < cores ? subsystems : std::max<std::size_t>(1, cores - 1);
    }
    case ProcessCount::Kind::kCount:
      break;
  }
  return std::min(subsystems, count.count);
}

std::vector<std::vector<std::size_t>> process_groups(std::size_t first, std::size_t count,
                                                     std::size_t processes) {
  std::vector<std::vector<std::size_t>> groups;
  if (count == 0) return groups;
  processes = std::clamp<std::size_t>(processes, 1, count);
  const std::size_t base = count / processes, larger = count % processes;
  std::size_t next = first;
  for (std::size_t g = 0; g < processes; ++g) {
    std::vector<std::size_t>& group = groups.emplace_back();
    for (std::size_t k = 0; k < base + (g < larger ? 1 : 0); ++k) group.push_back(next++);
  }
  return groups;
}

}  // namespace macrostep::placement
