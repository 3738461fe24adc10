// The MPI bridge (DESIGN.md "mpirun -np R macrostep run CONFIG --executor mpi"): the
// same co-simulation across ranks and nodes, with the same results (contract 1).
//
// Rank 0 is the master: it runs the scheme with an MpiExecutor. Every other rank is a node agent
// (run_node_agent) for a group of subsystems: on its node it starts, pins and drives their worker
// processes with a ProcessExecutor of its own (the same rings, supervisor and worker as
// `--executor processes`), and between ranks it forwards the step commands and replies over MPI:
// one message per agent per pass (all its subsystems' ipc::StepCommand bytes in one
// Cap'n Proto BridgeRequest, ipc/schema/bridge.capnp), nonblocking point-to-point
// (ipc/mpi/.../mpi_world.hpp). The subsystems compute exactly what they compute in the other
// executors from exactly the same inputs, so the results are bit-identical.
//
// Start-up (every rank runs the same command line):
//   1. main() makes the ipc::mpi::World. Agents send a BridgeHello (version, host, pid) and wait
//      for their BridgeSetup; rank 0 collects the hellos (greet_agents: ranks of another
//      macrostep version are a usage error) and loads the configuration.
//   2. Rank 0 builds the MpiExecutor (placement: contiguous blocks of subsystems per agent, so
//      neighbours in the coupling graph share a node), which sends every agent its group; each
//      agent starts its workers and answers with its node's placement. A master that stops before
//      (a configuration error) calls dismiss_agents() instead; the agents then exit 0.
//   3. Per macro step the executor contract of executor.hpp; the destructor sends every agent a
//      shutdown, after which the agents end their workers and leave.
// Failure: a worker that dies or hangs is reported by its agent (the agent's ProcessExecutor
// detects it); an agent that dies is noticed by rank 0 through its pid (same host) or through
// mpirun ending the job (SIGTERM to every rank, the stop flag): both throw RankFailure naming the
// rank, its host, the subsystems it hosted and the macro step. An agent that hangs (a deadlock,
// a stopped process) neither replies nor dies: while it waits for its workers it posts rank 0 a
// sign of life every quarter of the workers' hang timeout, and rank 0 takes an agent that owes a
// reply and has been silent for twice the hang timeout (ProcessOptions::hang_timeout, i.e.
// --hang-timeout; 0 = no check) for hung: RankFailure as above; once the results are written
// the agent is SIGKILLed (same host) or the job is ended with MPI_Abort (another host).
// Workers die with their agent (PR_SET_PDEATHSIG), and their segment name is unlinked after
// their handshake, so nothing is left behind on any node.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "macrostep/executors/executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::ipc::mpi {
class World;
}

namespace macrostep::executors {

// What version a rank reports in its hello; ranks must agree on it.
std::string bridge_version(const std::string& macrostep_version);

// A node agent as rank 0 knows it from its hello.
struct AgentInfo {
  int rank = 0;
  std::string host;
  int pid = 0;
  std::string version;
};

// A misuse of the bridge found before anything starts (exit status 2).
class BridgeUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rank 0: waits for every agent's hello (up to `timeout`); throws BridgeUsageError naming the
// ranks and hosts whose version differs from `version` (after dismissing every agent), or
// std::runtime_error if one does not greet in time.
std::vector<AgentInfo> greet_agents(ipc::mpi::World& world, const std::string& version,
                                    std::chrono::milliseconds timeout);

// Rank 0, when the run ends before an MpiExecutor exists: tells every agent that there is no run
// and why (they exit 0 without starting anything). At most once; no-op after an MpiExecutor.
void dismiss_agents(ipc::mpi::World& world, const std::string& reason);

// A node agent's main() (ranks 1..R-1): hello, setup, then the requests of rank 0 until its
// shutdown. Returns the exit status: 0 after a shutdown or a dismissal, 1 if the agent could not
// serve (its reason went to rank 0 and to stderr).
int run_node_agent(ipc::mpi::World& world, const std::string& version);

// The subsystems of each agent: `explicit_ranks` (per subsystem its rank 1..agents, the
// configuration's choice) or contiguous blocks in subsystem order, the first n % agents blocks
// one larger. Throws BridgeUsageError for more agents than subsystems, a rank out of range or an
// agent left without a subsystem.
std::vector<std::vector<std::size_t>> place_subsystems(std::size_t subsystems, std::size_t agents,
                                                       std::span<const int> explicit_ranks);

struct MpiOptions {
  // Per subsystem its rank (1..R-1); empty: contiguous blocks (place_subsystems).
  std::vector<int> subsystem_ranks;
  // --pin, planned by every agent on its own node for its group (PlacementMap of
  // runtime/placement), with 1 + k PUs per subsystem; of a `map:` each agent gets its group's
  // entries, and the map's master entry is not used (rank 0 is not pinned).
  std::string pin = "none";
  std::size_t pus_per_subsystem = 1;
  // Set (non-zero) by a signal handler: mpirun ends the job with SIGTERM when a rank dies; a
  // wait for an agent then stops and names the rank that is gone.
  const std::atomic<int>* stop = nullptr;
  // How often rank 0 checks the agents it waits for (and the stop flag).
  std::chrono::milliseconds poll_interval{10};
};

// A rank (node agent) died or hung, or its workers failed behind it, or mpirun ended the job.
class RankFailure : public WorkerFailure {
 public:
  RankFailure(const std::string& what, int rank, std::size_t subsystem, std::uint64_t step,
              double time)
      : WorkerFailure(what, subsystem, step, time), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

class MpiExecutor final : public Executor {
 public:
  // `agents`: from greet_agents(); `workers`: the options every agent's ProcessExecutor gets
  // (solver, rollback, jumps, threads, timeouts; not cpusets, not executable); its hang_timeout
  // also sets how long rank 0 waits for a silent agent (twice that). Sends every agent
  // its group and waits until their workers are ready; throws std::runtime_error naming the rank
  // and host whose workers could not start, BridgeUsageError for a bad placement.
  MpiExecutor(ipc::mpi::World& world, std::span<const AgentInfo> agents,
              const system::CoupledSystem& system,
              std::span<const library::ModelDescription> models, std::span<const double> u0,
              const ProcessOptions& workers, const MpiOptions& options);
  ~MpiExecutor() override;  // shuts the agents down (unless one is gone)
  MpiExecutor(const MpiExecutor&) = delete;
  MpiExecutor& operator=(const MpiExecutor&) = delete;

  std::size_t subsystem_count() const override;
  double accepted_time() const override;
  // export_state() / import_state(): the path must be readable / writable on the node of
  // subsystem i's agent (a shared file system on a cluster).

  // The placement: per agent its rank, host, subsystems and its node's hwloc placement, as text
  // (printed by the run) and as JSON (the metadata's "placement").
  std::string describe_placement() const;
  nlohmann::ordered_json placement_json() const;
  std::int64_t communication_ns() const;

 private:
  void do_step(double t_end, std::span<const SubsystemCommand> commands,
               PassOutcome& outcome) override;
  // One evaluate request per agent that hosts an asked subsystem (its ProcessExecutor forwards
  // the kEvaluate commands to the workers); agents without one get no message.
  void do_evaluate_outputs(std::span<const std::vector<double>> inputs, runner::EventSide side,
                           EvaluationOutcome& outcome) override;
  void do_accept() override;
  void do_reject() override;
  void do_accepted_state(std::size_t i, std::span<double> z) const override;
  ida::AdvanceStats do_total_stats(std::size_t i) const override;
  std::int64_t do_snapshot_ns(std::size_t i) const override;
  std::size_t do_export_state(std::size_t i, const std::string& path) override;
  void do_import_state(std::size_t i, const std::string& path) override;

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace macrostep::executors
