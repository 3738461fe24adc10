// Rank 0 meets its node agents before a run (mpi_executor.hpp: bridge_version, greet_agents,
// dismiss_agents): hellos, the version check, and the setup that says there is no run.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "bridge_messages.hpp"
#include "macrostep/executors/mpi_executor.hpp"
#include "macrostep/ipc/mpi_world.hpp"

namespace macrostep::executors {

namespace bridge {

namespace {

// Whether the agents have been given a setup (run or no run): at most once per process.
bool g_agents_told = false;

}  // namespace

bool mark_agents_told() {
  return std::exchange(g_agents_told, true);
}

}  // namespace bridge

std::string bridge_version(const std::string& macrostep_version) {
  return fmt::format("macrostep {} (worker protocol {}, bridge {})", macrostep_version,
                     ipc::kProtocolVersion, bridge::kBridgeVersion);
}

void dismiss_agents(ipc::mpi::World& world, const std::string& reason) {
  if (world.rank() != 0 || bridge::mark_agents_told()) return;
  bridge::Setup none;
  none.run = false;
  none.reason = reason;
  const auto bytes = bridge::encode(none);
  std::vector<int> ranks;
  std::vector<std::vector<std::byte>> messages;
  for (int r = 1; r < world.size(); ++r) {
    ranks.push_back(r);
    messages.push_back(bytes);
  }
  world.send_all(ranks, bridge::kControlTag, messages);
}

std::vector<AgentInfo> greet_agents(ipc::mpi::World& world, const std::string& version,
                                    std::chrono::milliseconds timeout) {
  std::vector<AgentInfo> agents(static_cast<std::size_t>(std::max(0, world.size() - 1)));
  for (std::size_t k = 0; k < agents.size(); ++k) {
    const auto m = world.receive(ipc::mpi::kAnySource, bridge::kControlTag, {}, timeout);
    if (!m) {
      throw std::runtime_error(
          fmt::format("--executor mpi: only {} of {} node agents said hello within {:.0f} s", k,
                      agents.size(), std::chrono::duration<double>(timeout).count()));
    }
    const bridge::Hello hello = bridge::decode_hello(m->bytes);
    agents.at(static_cast<std::size_t>(m->source) - 1) = {m->source, hello.host, hello.pid,
                                                          hello.version};
  }
  std::string differ;
  for (const auto& a : agents) {
    if (a.version != version) {
      differ += fmt::format("\n  rank {} on {} (pid {}): {}", a.rank, a.host, a.pid, a.version);
    }
  }
  if (!differ.empty()) {
    const std::string reason = fmt::format(
        "--executor mpi: every rank must run the same macrostep; rank 0 on {} runs {}, but{}",
        world.host(), version, differ);
    dismiss_agents(world, reason);
    throw BridgeUsageError(reason);
  }
  return agents;
}

}  // namespace macrostep::executors
