// The machine-local workers of a ProcessExecutor (process_executor.hpp: make_ring_workers, and
// the configuration every executor of worker processes hands its workers).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "macrostep/executors/process_executor.hpp"
#include "macrostep/executors/ring_transport.hpp"
#include "macrostep/executors/worker_supervisor.hpp"

namespace macrostep::executors {

namespace {

// A private directory for the workers' recovery files (ProcessOptions::max_restarts).
std::string make_recovery_directory() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "macrostep-recovery-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create a directory for the recovery files ({}): {}", pattern,
                    std::strerror(errno)));
  }
  return pattern;
}

}  // namespace

std::vector<ProcessWorkerSpec> worker_specs(const system::CoupledSystem& system,
                                            std::span<const library::ModelDescription> models,
                                            std::span<const double> u0) {
  const std::size_t n = system.subsystem_count();
  if (u0.size() != system.coupling_count()) {
    throw std::invalid_argument("ProcessExecutor: u0 has the wrong size");
  }
  if (models.size() != n) {
    throw std::invalid_argument("ProcessExecutor: one model description per subsystem required");
  }
  std::vector<ProcessWorkerSpec> specs(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& sub = system.subsystem(i);
    specs[i].model = &models[i];
    specs[i].initial_inputs.resize(sub.input_size());
    system.gather_inputs(i, u0, specs[i].initial_inputs);
    specs[i].outputs = sub.output_size();
    specs[i].states = sub.state_size();
  }
  return specs;
}

worker::WorkerSetup worker_setup(const ProcessWorkerSpec& spec, std::size_t i, std::size_t n,
                                 const ProcessOptions& options) {
  worker::WorkerSetup setup;
  setup.model = spec.model;
  setup.initial_inputs = spec.initial_inputs;
  setup.solver = options.solver_for(i);
  setup.rollback = options.rollback;
  setup.jumps = options.jumps;
  setup.output_interval = options.output_interval;
  setup.extra_runs = options.extra_runs;
  setup.threads = options.threads;
  setup.index = static_cast<std::uint32_t>(i);
  setup.subsystems = static_cast<std::uint32_t>(n);
  return setup;
}

void check_process_options(std::span<const ProcessWorkerSpec> specs,
                           const ProcessOptions& options) {
  if (options.extra_runs + 1 > ipc::kMaxRuns) {
    throw std::invalid_argument(
        fmt::format("ProcessExecutor: at most {} extra runs", ipc::kMaxRuns - 1));
  }
  if (options.max_restarts > 0 && !options.rollback) {
    throw std::invalid_argument("ProcessExecutor: crash recovery (max_restarts) needs rollback");
  }
  for (const ProcessWorkerSpec& spec : specs) {
    if (spec.outputs > ipc::kMaxOutputs) {
      throw std::invalid_argument("ProcessExecutor: too many outputs for the reply");
    }
  }
  std::vector<bool> grouped(specs.size(), false);
  for (const auto& group : options.groups) {
    for (std::size_t i : group) {
      if (i >= specs.size() || grouped[i]) {
        throw std::invalid_argument(fmt::format(
            "ProcessExecutor: subsystem {} of a group is not one of {} or in two groups", i + 1,
            specs.size()));
      }
      if (i == 0 && options.host_first_subsystem) {
        throw std::invalid_argument(
            "ProcessExecutor: subsystem 1 runs in the master (host_first_subsystem), not in a "
            "group");
      }
      grouped[i] = true;
    }
  }
}

std::size_t worker_processes(std::size_t workers, const ProcessOptions& options) {
  std::size_t processes = options.host_first_subsystem && workers > 0 ? workers - 1 : workers;
  for (const auto& group : options.groups) {
    if (!group.empty()) processes -= group.size() - 1;
  }
  return processes;
}

std::string recovery_file(const std::string& dir, std::size_t i) {
  return fmt::format("{}/subsystem-{}.state", dir, i + 1);
}

WorkerParts make_ring_workers(std::span<const ProcessWorkerSpec> specs,
                              const ProcessOptions& options) {
  check_process_options(specs, options);
  const std::size_t n = specs.size();
  WorkerParts parts;
  if (options.max_restarts > 0) parts.recovery_dir = make_recovery_directory();
  try {
    const pid_t master = getpid();
    // The processes that compute: the worker processes and the master if it hosts one.
    const std::size_t processes =
        worker_processes(n, options) + (options.host_first_subsystem && n > 0 ? 1 : 0);
    std::vector<std::vector<std::byte>> configs;
    std::vector<std::size_t> state_sizes;
    for (std::size_t i = 0; i < n; ++i) {
      worker::WorkerSetup setup = worker_setup(specs[i], i, n, options);
      if (i < options.cpusets.size()) setup.cpuset = options.cpusets[i];
      setup.master_pid = master;
      if (processes < n) setup.processes = static_cast<std::uint32_t>(processes);
      if (!parts.recovery_dir.empty()) {
        setup.recovery_path = recovery_file(parts.recovery_dir, i);
        setup.recovery_interval_ms = static_cast<std::uint32_t>(options.recovery_interval.count());
      }
      configs.push_back(worker::encode_config(setup));
      state_sizes.push_back(specs[i].states);
    }
    auto rings = std::make_unique<RingTransport>(configs, state_sizes, options.wait, master,
                                                 options.extra_runs, processes < n ? processes : 0,
                                                 options.threads);
    if (!options.wait) {
      // The master waits for replies unless ProcessOptions::wait says otherwise: spin while it
      // and the worker processes (one per group; one fewer with subsystem 1 hosted: 2
      // subsystems on 2 CPUs then spin) fit on the run's CPUs, then yield (hands the CPU to a
      // worker or to other work queued on it, see worker.cpp; after a yield that did, sleep),
      // then sleep; sleep at once when they do not fit. The spin is short on purpose: beside
      // other load on the machine a longer one kept the CPU from the worker it waited for
      // (overhead bench, 2 subsystems, first hosted, 11 interleaved rounds under load 8-9: 8192
      // PAUSEs 181 us per macro step, 2048 PAUSEs 111 us, 256 PAUSEs 30-33 us, the same as
      // sleeping at once; spinning at all pays only on an otherwise idle machine).
      rings->set_wait_policy(
          ipc::WaitPolicy::spin_yield_sleep(worker_processes(n, options) + 1, rings->run_cpus()));
    }
    parts.supervisor = std::make_unique<ProcessSupervisor>(
        options.executable, n, rings->segment_name(), rings->fd(), options.groups);
    parts.transport = std::move(rings);
  } catch (...) {
    if (!parts.recovery_dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(parts.recovery_dir, ignored);
    }
    throw;
  }
  return parts;
}

}  // namespace macrostep::executors
