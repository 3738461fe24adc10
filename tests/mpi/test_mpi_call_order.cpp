// The executor protocol (tests/executors/call_order_suite.hpp) behind the MPI bridge: rank 0 runs
// the suite with an MpiExecutor per case, every other rank is a node agent (run_node_agent) for
// one session per case. Started by mpirun (CMakeLists.txt), not on its own. The agents' process
// executors spawn this program as their workers (/proc/self/exe), so it also serves
// `worker --segment NAME --segment-fd FD --index I`.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../executors/call_order_suite.hpp"
#include "macrostep/executors/mpi_executor.hpp"
#include "macrostep/ipc/mpi_world.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::testing {
namespace {

// Rank 0 tells each agent rank on this tag whether another session follows (one byte) or not
// (no bytes); the bridge's own tags are 7001-7004.
constexpr int kSessionTag = 7100;
const std::string kVersion = executors::bridge_version("call-order test");

ipc::mpi::World* g_world = nullptr;

std::vector<int> agent_ranks() {
  std::vector<int> ranks;
  for (int r = 1; r < g_world->size(); ++r) ranks.push_back(r);
  return ranks;
}

void tell_agents(bool session) {
  const std::vector<int> ranks = agent_ranks();
  const std::vector<std::byte> go =
      session ? std::vector<std::byte>{std::byte{1}} : std::vector<std::byte>{};
  std::vector<std::vector<std::byte>> messages(ranks.size(), go);
  g_world->send_all(ranks, kSessionTag, messages);
}

struct MpiFactory {
  static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
                                                   const executors::ExecutorOptions& options) {
    tell_agents(true);
    const auto agents = executors::greet_agents(*g_world, kVersion, std::chrono::seconds(60));
    executors::ProcessOptions workers;
    static_cast<executors::ExecutorOptions&>(workers) = options;
    return std::make_unique<executors::MpiExecutor>(*g_world, agents, s.system, s.models, s.u0,
                                                    workers, executors::MpiOptions{});
  }
};

// Node agent: one run_node_agent per session until rank 0 says there is none.
int serve_sessions(ipc::mpi::World& world) {
  for (;;) {
    const auto m = world.receive(0, kSessionTag);
    if (!m || m->bytes.empty()) return 0;
    if (const int status = executors::run_node_agent(world, kVersion); status != 0) return status;
  }
}

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(CallOrderMpi, CallOrder, MpiFactory);

}  // namespace macrostep::testing

int main(int argc, char** argv) {
  // A worker process of an agent's process executor.
  if (argc == 8 && std::string(argv[1]) == "worker") {
    return macrostep::worker::run_worker(argv[3], std::stoul(argv[7]), std::stoi(argv[5]));
  }
  ::testing::InitGoogleTest(&argc, argv);
  macrostep::ipc::mpi::World world(&argc, &argv);
  macrostep::testing::g_world = &world;
  if (world.rank() != 0) return macrostep::testing::serve_sessions(world);
  if (world.size() < 2) {
    std::fputs("test_mpi_call_order: run it with mpirun -np 2 (or more)\n", stderr);
    return 1;
  }
  const int status = RUN_ALL_TESTS();
  macrostep::testing::tell_agents(false);
  return status;
}
