// The executor a run's settings ask for (executor_factory.hpp).
#include "executor_factory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "macrostep/control/estimators.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/placement/placement.hpp"

namespace macrostep::run {

std::size_t runs_per_subsystem(const CosimSettings& settings, std::size_t max_inputs) {
  const auto& corrector = settings.scheme.corrector;
  // Scheme auto runs both kinds of step: room for the larger.
  const auto comparison =
      static_cast<std::size_t>(control::comparison_runs(settings.scheme.control.estimator));
  if (corrector && corrector->iteration != corrector::IterationKind::kWaveform &&
      corrector::jacobian_traits(corrector->jacobian).perturbed_runs) {
    return 1 + std::max(max_inputs, comparison);
  }
  return 1 + comparison;
}

namespace {

static_assert(config::kMaxSubsystems + 2 <= ipc::kMaxRegions,
              "the process executor needs a segment region per subsystem and two of its own");

// The options of the worker processes (process executor, or every MPI node agent's).
executors::ProcessOptions worker_options(const CosimSettings& settings,
                                         const system::CoupledSystem& system) {
  executors::ProcessOptions po;
  static_cast<executors::ExecutorOptions&>(po) = settings.executor;
  po.executable = settings.worker_executable;
  po.hang_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(std::llround(settings.hang_timeout * 1000.0)));
  std::size_t largest = 0;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    largest = std::max(largest, system.subsystem(i).state_size());
  }
  // Rounded up: a timeout below a millisecond is one, not none.
  po.handshake_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(
      std::ceil(settings.handshake_timeout.value_or(handshake_timeout_for(largest)) * 1000.0)));
  return po;
}

}  // namespace

std::unique_ptr<executors::Executor> make_executor(
    const CosimSettings& settings, const system::CoupledSystem& system,
    const std::vector<library::ModelDescription>& models, std::span<const double> u0,
    nlohmann::ordered_json& meta, std::string& placement) {
  if (settings.cosim.executor == config::ExecutorKind::kInProcess) {
    return std::make_unique<executors::InProcessExecutor>(system, u0, settings.executor);
  }
  executors::ProcessOptions po = worker_options(settings, system);
  std::size_t inputs = 0;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    inputs = std::max(inputs, system.subsystem(i).input_size());
  }
  if (settings.cosim.executor == config::ExecutorKind::kMpi) {
    BridgeRequest request{
        &system, models, u0, po, settings.pin.to_string(), runs_per_subsystem(settings, inputs)};
    return settings.mpi->make(request, meta["placement"], placement);
  }
  const placement::Topology topology = placement::Topology::detect();
  const placement::PlacementMap map = placement::plan_placement(
      topology, settings.pin, system.subsystem_count(), runs_per_subsystem(settings, inputs));
  po.cpusets = map.subsystems;
  po.host_first_subsystem = settings.master_hosts_first;
  // The subsystems outside the master in groups, one worker process each (a group's process
  // is pinned to its members' PUs together).
  const std::size_t first = settings.master_hosts_first ? 1 : 0;
  const std::size_t remote = system.subsystem_count() - first;
  const std::size_t processes =
      placement::resolve_process_count(settings.processes, remote, topology);
  if (processes < remote) po.groups = placement::process_groups(first, remote, processes);
  po.max_restarts = settings.max_restarts;
  // Every recovery is told on stderr as it happens and listed in the metadata.
  po.on_recovery = [&meta](const std::string& what) {
    fmt::print(stderr, "\nmacrostep: {}\n", what);
    meta["recoveries"].push_back(what);
  };
  // A worker starved of CPU long enough to pass for hung: the first few on stderr, all counted.
  po.on_cpu_wait = [&meta](const std::string& what) {
    auto& count = meta["cpu_waits"];
    count = count.is_null() ? 1 : count.get<int>() + 1;
    if (count.get<int>() <= 3) fmt::print(stderr, "\nmacrostep: warning: {}\n", what);
  };
  meta["placement"] = map.to_json();
  meta["placement"]["processes"] = settings.processes.to_string();
  meta["placement"]["worker_processes"] = processes;
  placement = map.describe();
  if (!po.groups.empty()) {
    std::string groups;
    for (const auto& g : po.groups) {
      groups += fmt::format("{}{}", groups.empty() ? "" : ", ",
                            g.size() == 1 ? fmt::format("{}", g.front() + 1)
                                          : fmt::format("{}-{}", g.front() + 1, g.back() + 1));
      meta["placement"]["process_groups"].push_back(g.size());
    }
    // One line of its own after the map's (describe() ends each of its lines).
    if (!placement.empty() && placement.back() != '\n') placement += '\n';
    placement += fmt::format("{} worker process{} subsystems {}\n", processes,
                             processes == 1 ? " hosts" : "es host", groups);
  }
  auto executor = std::make_unique<executors::ProcessExecutor>(system, models, u0, po);
  // The master is bound after the workers are spawned, so unpinned workers keep every PU.
  // Hosting subsystem 1, it takes that subsystem's PUs.
  placement::bind_current_process(settings.master_hosts_first ? map.subsystems.front()
                                                              : map.master);
  return executor;
}

}  // namespace macrostep::run
