// place_subsystems (mpi_executor.hpp).
#include <fmt/format.h>

#include "macrostep/executors/mpi_executor.hpp"

namespace macrostep::executors {

std::vector<std::vector<std::size_t>> place_subsystems(std::size_t subsystems, std::size_t agents,
                                                       std::span<const int> explicit_ranks) {
  if (agents == 0) {
    throw BridgeUsageError(
        "--executor mpi needs at least 2 ranks: rank 0 is the master, every other rank a node "
        "agent for a group of subsystems (mpirun -np 2 or more)");
  }
  if (agents > subsystems) {
    throw BridgeUsageError(fmt::format(
        "--executor mpi with {} ranks: rank 0 is the master and {} node agents need a subsystem "
        "each, but the configuration has {} subsystem{}; start at most {} ranks",
        agents + 1, agents, subsystems, subsystems == 1 ? "" : "s", subsystems + 1));
  }
  std::vector<std::vector<std::size_t>> groups(agents);
  if (explicit_ranks.empty()) {
    // Contiguous blocks: the subsystems are numbered along the coupling graph (the chain's cut
    // order), so that neighbours share an agent and its node.
    const std::size_t base = subsystems / agents, larger = subsystems % agents;
    std::size_t next = 0;
    for (std::size_t a = 0; a < agents; ++a) {
      const std::size_t size = base + (a < larger ? 1 : 0);
      for (std::size_t k = 0; k < size; ++k) groups[a].push_back(next++);
    }
    return groups;
  }
  if (explicit_ranks.size() != subsystems) {
    throw BridgeUsageError(
        fmt::format("the placement names a rank for {} subsystems; the "
                    "configuration has {}",
                    explicit_ranks.size(), subsystems));
  }
  for (std::size_t i = 0; i < subsystems; ++i) {
    const int r = explicit_ranks[i];
    if (r < 1 || static_cast<std::size_t>(r) > agents) {
      throw BridgeUsageError(
          fmt::format("the placement puts subsystem {} on rank {}; the node agents are ranks 1..{}",
                      i + 1, r, agents));
    }
    groups[static_cast<std::size_t>(r) - 1].push_back(i);
  }
  for (std::size_t a = 0; a < agents; ++a) {
    if (groups[a].empty()) {
      throw BridgeUsageError(fmt::format(
          "the placement leaves rank {} without a subsystem; start fewer ranks", a + 1));
    }
  }
  return groups;
}

}  // namespace macrostep::executors
