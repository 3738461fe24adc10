// The node agent (run_node_agent, mpi_executor.hpp): ranks 1..R-1 of a bridged run. It drives the
// worker processes of its group with a ProcessExecutor and forwards rank 0's requests to it,
// one MPI message per request.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <memory>
#include <string_view>

#include "bridge_messages.hpp"
#include "macrostep/executors/mpi_executor.hpp"
#include "macrostep/ipc/mpi_world.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::executors {

namespace {

using Clock = std::chrono::steady_clock;

// SIGTERM / SIGINT / SIGHUP (mpirun ends the job when a rank dies): the agent stops waiting for
// rank 0 and ends its workers. A second signal takes the default action.
std::atomic<int> g_agent_stop{0};

extern "C" void on_agent_signal(int sig) {
  if (g_agent_stop.exchange(sig) != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

struct AgentStopped {
  int signal;
};

void check_agent_stop() {
  if (const int sig = g_agent_stop.load()) throw AgentStopped{sig};
}

// The agent's group and the ProcessExecutor that drives it.
struct Group {
  std::vector<std::uint32_t> subsystems;  // global indices
  std::vector<std::uint32_t> outputs;
  std::vector<std::uint64_t> states;
  std::vector<worker::DecodedConfig> configs;  // own the model descriptions
  std::unique_ptr<ProcessExecutor> executor;
  std::unique_ptr<ipc::StepCommand> command = std::make_unique<ipc::StepCommand>();
  std::unique_ptr<ipc::StepReply> reply = std::make_unique<ipc::StepReply>();
  std::vector<SubsystemCommand> commands;
  PassOutcome outcome;
  std::vector<std::vector<double>> inputs;  // an evaluate request's, per group subsystem
  EvaluationOutcome evaluation;
  bool abandon_mpi = false;  // leave without MPI_Finalize (a rank is gone)
};

// Starts the group's workers on this node (pinned per --pin on this node's topology) and fills
// the ready reply with the placement. While the executor waits for its workers, the agent posts
// rank 0 a sign of life every bridge::alive_interval (rank 0 takes a silent agent for hung).
void start_group(ipc::mpi::World& world, const bridge::Setup& setup, Group& g,
                 bridge::Reply& ready) {
  const std::size_t n = setup.subsystems.size();
  g.subsystems = setup.subsystems;
  g.outputs = setup.outputs;
  g.states = setup.states;
  std::vector<ProcessWorkerSpec> specs(n);
  for (std::size_t j = 0; j < n; ++j) {
    g.configs.push_back(worker::decode_config(setup.configs[j].data(), setup.configs[j].size()));
  }
  ProcessOptions po;
  for (std::size_t j = 0; j < n; ++j) {
    specs[j] = {&g.configs[j].model, g.configs[j].initial_inputs, setup.outputs[j],
                setup.states[j]};
    po.subsystem_numbers.push_back(setup.subsystems[j] + 1);
    po.subsystem_solvers.push_back(g.configs[j].solver);  // each its own
  }
  const worker::DecodedConfig& first = g.configs.front();
  po.solver = first.solver;
  po.rollback = first.rollback;
  po.jumps = first.jumps;
  po.output_interval = first.output_interval;
  po.threads = first.threads;
  po.extra_runs = setup.extra_runs;
  po.hang_timeout = std::chrono::milliseconds(setup.hang_timeout_ms);
  po.handshake_timeout = std::chrono::milliseconds(setup.handshake_timeout_ms);
  // mpirun kills a rank about a second after SIGTERM: leave the workers less than that.
  po.shutdown_timeout = std::chrono::milliseconds(500);
  if (const auto every = bridge::alive_interval(po.hang_timeout); every.count() > 0) {
    po.while_waiting = [&world, every, last = Clock::now()]() mutable {
      const auto now = Clock::now();
      if (now - last < every) return;
      last = now;
      try {
        world.post(0, bridge::kAliveTag);
      } catch (const std::exception&) {
        // rank 0 gone: mpirun ends this rank (SIGTERM); the next wait notices
      }
    };
  }
  const placement::PlacementMap map = placement::plan_placement(
      placement::Topology::detect(), placement::parse_pin(setup.pin), n, setup.pus_per_subsystem);
  po.cpusets = map.subsystems;
  g.executor = std::make_unique<ProcessExecutor>(specs, setup.initial_time, po);
  placement::bind_current_process(map.master);
  ready.placement = map.describe();
  ready.placement_json = map.to_json().dump();
  for (pid_t pid : g.executor->worker_pids()) ready.worker_pids.push_back(pid);
  g.commands.resize(n);
}

// The reply of subsystem j of the group from the pass outcome: the same encoder the worker uses.
void write_step_reply(const Group& g, std::size_t j, double t_end, ipc::StepReply& r) {
  const SubsystemOutcome& so = g.outcome.subsystems[j];
  r.status = ipc::ReplyStatus::kOk;
  r.failed_run = 0;
  r.error[0] = '\0';
  r.time = t_end;
  worker::encode_pass(so.nominal, so.extra, g.outputs[j], so.solver_ns, so.extra_ns, r);
  if (!g.outcome.ok && g.outcome.failed_subsystem == j) {
    r.set_failure(0, g.outcome.error, g.outcome.terminated);
  }
}

void serve_step(const bridge::Request& rq, Group& g, bridge::Reply& reply) {
  const std::size_t n = g.subsystems.size();
  if (rq.commands.size() != n) {
    throw std::runtime_error(fmt::format(
        "bridge: a step request with {} commands for {} subsystems", rq.commands.size(), n));
  }
  for (std::size_t j = 0; j < n; ++j) {
    bridge::read_wire(rq.commands[j], *g.command);
    worker::unpack_runs(*g.command, g.commands[j].nominal, g.commands[j].extra);
  }
  g.executor->step(rq.t_end, g.commands, g.outcome);
  reply.communication_ns = g.outcome.communication_ns;
  for (std::size_t j = 0; j < n; ++j) {
    write_step_reply(g, j, rq.t_end, *g.reply);
    reply.replies.push_back(bridge::wire(*g.reply));
  }
}

// An output evaluation (Executor::evaluate_outputs) of the asked group subsystems: the same
// kEvaluate commands and replies the rings carry, forwarded.
void serve_evaluate(const bridge::Request& rq, Group& g, bridge::Reply& reply) {
  const std::size_t n = g.subsystems.size();
  if (rq.commands.size() != n) {
    throw std::runtime_error(fmt::format(
        "bridge: an evaluate request with {} commands for {} subsystems", rq.commands.size(), n));
  }
  g.inputs.resize(n);
  // One side for the whole request: the master asks every subsystem for the same state.
  runner::EventSide side = runner::EventSide::kBefore;
  for (std::size_t j = 0; j < n; ++j) {
    g.inputs[j].clear();
    if (rq.commands[j].empty()) continue;
    bridge::read_wire(rq.commands[j], *g.command);
    if (g.command->kind != ipc::CommandKind::kEvaluate) {
      throw std::runtime_error("bridge: an evaluate request without a kEvaluate command");
    }
    const auto u = g.command->inputs();
    g.inputs[j].assign(u.begin(), u.end());
    if (g.command->after_event != 0) side = runner::EventSide::kAfter;
  }
  g.executor->evaluate_outputs(g.inputs, g.evaluation, side);
  for (std::size_t j = 0; j < n; ++j) {
    if (rq.commands[j].empty()) {
      reply.replies.emplace_back();
      continue;
    }
    ipc::StepReply& r = *g.reply;
    const EvaluatedOutputs& e = g.evaluation.subsystems[j];
    const bool failed = !g.evaluation.ok && g.evaluation.failed_subsystem == j;
    r.status = ipc::ReplyStatus::kOk;
    r.failed_run = 0;
    r.error[0] = '\0';
    worker::encode_evaluation(e.outputs, e.feedthrough,
                              failed ? std::string_view(g.evaluation.error) : std::string_view(),
                              r);
    reply.replies.push_back(bridge::wire(r));
  }
}

// Handles one request; false once the agent is to leave (shutdown).
bool serve(const bridge::Request& rq, Group& g, bridge::Reply& reply) {
  using K = bridge::RequestKind;
  const std::size_t n = g.subsystems.size();
  switch (rq.kind) {
    case K::kStep:
      serve_step(rq, g, reply);
      break;
    case K::kEvaluate:
      serve_evaluate(rq, g, reply);
      break;
    case K::kAccept:
      g.executor->accept();
      break;
    case K::kReject:
      g.executor->reject();
      break;
    case K::kStates:
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t at = reply.states.size();
        reply.states.resize(at + g.states[j]);
        g.executor->accepted_state(j, std::span<double>(reply.states).subspan(at, g.states[j]));
      }
      break;
    case K::kStats:
      for (std::size_t j = 0; j < n; ++j) {
        reply.totals.push_back(g.executor->total_stats(j));
        reply.snapshot_ns.push_back(g.executor->snapshot_ns(j));
      }
      break;
    case K::kExport:
      reply.exported_bytes = g.executor->export_state(rq.subsystem, rq.path);
      break;
    case K::kImport:
      g.executor->import_state(rq.subsystem, rq.path);
      reply.time = g.executor->accepted_time();
      break;
    case K::kShutdown:
      // After a lost rank MPI_Finalize would wait for it for ever.
      if (rq.reason != worker::kNormalShutdown && rq.reason != "the run failed") {
        g.abandon_mpi = true;
      }
      return false;
  }
  return true;
}

// The requests of rank 0 until its shutdown. A failure of a request without a reply (accept,
// reject) is reported with the next reply.
void serve_requests(ipc::mpi::World& world, Group& g) {
  std::optional<bridge::Reply> pending_failure;
  for (;;) {
    const auto message = world.receive(0, bridge::kRequestTag, check_agent_stop);
    const bridge::Request rq = bridge::decode_request(message->bytes);
    const auto started = Clock::now();
    bridge::Reply reply;
    bool go_on = true;
    try {
      // After a failure only the shutdown is served; the rest get the failure as their reply.
      if (!pending_failure || rq.kind == bridge::RequestKind::kShutdown) {
        go_on = serve(rq, g, reply);
      }
    } catch (const WorkerFailure& e) {
      reply = {};
      reply.ok = false;
      reply.worker_failure = true;
      reply.failed_subsystem = g.subsystems.at(e.subsystem());
      reply.error = e.what();
    } catch (const std::exception& e) {
      reply = {};
      reply.ok = false;
      reply.failed_subsystem = g.subsystems.front();
      reply.error = e.what();
    }
    if (!go_on) return;
    if (!reply.ok && !pending_failure) pending_failure = reply;
    if (!bridge::expects_reply(rq.kind)) continue;
    if (pending_failure) reply = *pending_failure;
    reply.busy_ns = bridge::elapsed_ns(started);
    world.send(0, bridge::kReplyTag, bridge::encode(reply), check_agent_stop);
  }
}

}  // namespace

int run_node_agent(ipc::mpi::World& world, const std::string& version) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, on_agent_signal);
  const std::string who = fmt::format("macrostep: rank {} ({})", world.rank(), world.host());
  Group g;
  try {
    world.send(0, bridge::kControlTag,
               bridge::encode(
                   bridge::Hello{version, world.host(), static_cast<int>(getpid()), world.rank()}),
               check_agent_stop);
    const auto message = world.receive(0, bridge::kControlTag, check_agent_stop);
    const bridge::Setup setup = bridge::decode_setup(message->bytes);
    if (!setup.run) return 0;  // rank 0 says why
    bridge::Reply ready;
    try {
      start_group(world, setup, g, ready);
    } catch (const std::exception& e) {
      ready.ok = false;
      ready.failed_subsystem = setup.subsystems.empty() ? 0 : setup.subsystems.front();
      ready.error = e.what();
      g.executor.reset();
    }
    world.send(0, bridge::kReplyTag, bridge::encode(ready), check_agent_stop);
    if (!ready.ok) {
      // Rank 0 reports it and shuts the run down; wait for that, serving nothing.
      world.receive(0, bridge::kRequestTag, check_agent_stop);
      return 0;
    }
    serve_requests(world, g);
    g.executor.reset();  // ends the workers (kShutdown, then SIGKILL after a grace)
    if (g.abandon_mpi) world.abandon();
    return 0;
  } catch (const AgentStopped& s) {
    // mpirun ends the job (a rank died, or the user interrupted it): end the workers and leave
    // without MPI_Finalize, which would wait for the dead rank.
    g.executor.reset();
    world.abandon();
    return 128 + s.signal;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: node agent failed: {}\n", who, e.what());
    g.executor.reset();
    world.abandon();
    return 1;
  }
}

}  // namespace macrostep::executors
