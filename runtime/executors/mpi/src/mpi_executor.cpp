// MpiExecutor, greet_agents, dismiss_agents (mpi_executor.hpp): rank 0's side of the bridge.
#include "macrostep/executors/mpi_executor.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "bridge_messages.hpp"
#include "macrostep/executors/worker_replies.hpp"
#include "macrostep/ipc/mpi_world.hpp"
#include "macrostep/ipc/proc_stat.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep::executors {

namespace {

using Clock = std::chrono::steady_clock;

// Whether process `pid` of this host has ended (gone, or a zombie its parent has not reaped).
bool process_gone(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const auto stat = ipc::read_proc_stat(pid);
  return !stat || stat->state == 'Z' || stat->state == 'X';
}

// "1-3,7" (1-based subsystem numbers).
std::string subsystem_list(const std::vector<std::size_t>& group) {
  std::vector<unsigned> numbers;
  for (std::size_t i : group) numbers.push_back(static_cast<unsigned>(i + 1));
  return placement::format_pu_list(numbers);
}

}  // namespace

struct MpiExecutor::State {
  struct Agent {
    AgentInfo info;
    std::vector<std::size_t> group;  // global subsystem indices, ascending
    std::string placement;
    nlohmann::ordered_json placement_json;
    std::vector<int> worker_pids;
    bool owes = false;     // a request that expects a reply is unanswered
    bool sending = false;  // a request is on its way (send_all has not completed)
    Clock::time_point sent;
    // Since when the agent has been silent (its last request or sign of life); later than now
    // while its workers may still be starting.
    Clock::time_point heard;
    bool gone = false;
    bool hung = false;  // taken for hung: ended in shutdown()
    bool states_valid = false, stats_valid = false;
    std::vector<double> states;  // the group's accepted states, concatenated
  };
  ipc::mpi::World* world = nullptr;
  MpiOptions options;
  // An agent that owes a reply and is silent for longer is hung (0: never; see
  // bridge::agent_silence_limit).
  std::chrono::milliseconds silence_limit{0};
  // MACROSTEP_BRIDGE_AGENTS_REMOTE (tests): every agent is treated as on another host (no pid
  // checks, no SIGKILL of a hung agent: MPI_Abort).
  bool all_remote = false;
  std::vector<Agent> agents;
  std::vector<std::size_t> owner, local, outputs, state_offset, state_sizes;
  std::vector<ida::AdvanceStats> totals;
  std::vector<std::int64_t> snapshot;
  double accepted_time = 0.0, step_begin = 0.0, step_end = 0.0;
  // Whether a macro step is under way, for failure messages (during()); Executor checks the
  // call order.
  bool stepped = false;
  bool broken = false;
  std::uint64_t attempt = 0, accepted_steps = 0;
  std::int64_t communication_ns = 0;
  std::unique_ptr<ipc::StepCommand> command = std::make_unique<ipc::StepCommand>();
  std::unique_ptr<ipc::StepReply> reply = std::make_unique<ipc::StepReply>();

  std::string name(const Agent& a) const {
    return fmt::format("rank {} (host {}, pid {}; subsystem{} {})", a.info.rank, a.info.host,
                       a.info.pid, a.group.size() == 1 ? "" : "s", subsystem_list(a.group));
  }

  // An agent that answered for another number of subsystems than it hosts breaks the bridge.
  void check_reply_count(std::size_t a, std::size_t replies) {
    if (replies != agents[a].group.size()) {
      broken = true;
      throw std::runtime_error(fmt::format("bridge: {} answered {} of {} subsystems",
                                           name(agents[a]), replies, agents[a].group.size()));
    }
  }

  std::string during() const {
    if (!stepped) {
      return fmt::format("between macro steps at t = {:.9g} (after macro step {})", accepted_time,
                         accepted_steps);
    }
    return fmt::format("macro step {} (attempt {}) from t = {:.9g} to {:.9g}", accepted_steps + 1,
                       attempt, step_begin, step_end);
  }

  // Whether rank 0 can see and signal agent a's process (same host).
  bool same_host(const Agent& a) const { return !all_remote && a.info.host == world->host(); }

  [[noreturn]] void fail_rank(Agent& a, const std::string& why) {
    broken = true;
    throw RankFailure(fmt::format("{} {} during {}", name(a), why, during()), a.info.rank,
                      a.group.front(), accepted_steps + 1, accepted_time);
  }

  // Between polls while rank 0 waits (for a reply, or for a send that a dead rank never takes):
  // an agent of this host whose process is gone, or the stop flag (mpirun sends SIGTERM to every
  // rank when one dies) end the wait with a RankFailure. Every agent is checked, not only those
  // that owe a reply, so that the one that died first is named: the others end only after
  // mpirun's SIGTERM, about a second later.
  void check_agents() {
    for (auto& a : agents) {
      if (!a.gone && same_host(a) && process_gone(a.info.pid)) {
        a.gone = true;
        world->abandon();
        fail_rank(a, "ended (its process is gone; its workers died with it)");
      }
    }
    check_silence();
    if (options.stop == nullptr || options.stop->load() == 0) return;
    world->abandon();
    for (auto& a : agents) {
      if (a.owes) {
        a.gone = true;
        fail_rank(a, fmt::format("did not answer before the job was ended (signal {}: mpirun ends "
                                 "every rank when one dies or is interrupted)",
                                 options.stop->load()));
      }
    }
    broken = true;
    for (auto& a : agents) a.gone = true;
    throw RankFailure(fmt::format("the job was ended (signal {}: mpirun ends every rank when one "
                                  "dies or is interrupted) during {}",
                                  options.stop->load(), during()),
                      0, 0, accepted_steps + 1, accepted_time);
  }

  // A hung agent (a deadlock, a stopped process) neither replies nor dies: rank 0 would wait for
  // ever. An agent posts a sign of life (bridge::kAliveTag) while it waits for its workers, so
  // one that owes a reply (or has not taken a request) and has been silent for silence_limit is
  // hung. A hung worker behind a live agent is reported by the agent itself (after one hang
  // timeout, the limit here is two). Runs between polls only: no cost on the fast path.
  void check_silence() {
    if (silence_limit.count() <= 0) return;
    const auto now = Clock::now();
    while (const auto m = world->try_receive(ipc::mpi::kAnySource, bridge::kAliveTag)) {
      const std::size_t a = static_cast<std::size_t>(m->source) - 1;
      if (a < agents.size()) agents[a].heard = std::max(agents[a].heard, now);
    }
    for (auto& a : agents) {
      if (a.gone || !(a.owes || a.sending) || now - a.heard <= silence_limit) continue;
      fail_hung(a, now - a.heard);
    }
  }

  // Agent a is hung: the run ends; shutdown() ends the agent once the results are written.
  [[noreturn]] void fail_hung(Agent& a, Clock::duration silent) {
    broken = true;
    a.gone = a.hung = true;
    world->abandon();
    const double hang_s = std::chrono::duration<double>(silence_limit).count() / 2;
    throw RankFailure(
        fmt::format(
            "{} hangs: no reply and no sign of life for {:.1f} s (twice --hang-timeout {:g} "
            "s) during {}; {}",
            name(a), std::chrono::duration<double>(silent).count(), hang_s, during(),
            same_host(a) ? "it is killed (SIGKILL; its workers die with it)"
                         : "it runs on another host: the job is ended with MPI_Abort once "
                           "the results are written"),
        a.info.rank, a.group.front(), accepted_steps + 1, accepted_time);
  }

  // Sends request k to agent `which[k]`; marks those that answer as owing.
  void send(const std::vector<std::size_t>& which, std::vector<std::vector<std::byte>>& messages,
            bool reply) {
    std::vector<int> ranks;
    const auto start = Clock::now();
    for (std::size_t a : which) {
      ranks.push_back(agents[a].info.rank);
      agents[a].sending = true;
      agents[a].heard = start;  // a new request: its silence counts from now
    }
    world->send_all(ranks, bridge::kRequestTag, messages, [this] { check_agents(); });
    const auto now = Clock::now();
    for (std::size_t a : which) {
      agents[a].sending = false;
      agents[a].owes = reply;
      agents[a].sent = now;
    }
  }

  // One request of `kind` to every agent (accept, reject: no reply).
  void broadcast(bridge::RequestKind kind, const std::string& reason = {}) {
    bridge::Request rq;
    rq.kind = kind;
    rq.reason = reason;
    rq.macro_step = accepted_steps + 1;
    const auto bytes = bridge::encode(rq);
    std::vector<std::size_t> all;
    std::vector<std::vector<std::byte>> messages;
    for (std::size_t a = 0; a < agents.size(); ++a) {
      all.push_back(a);
      messages.push_back(bytes);
    }
    send(all, messages, bridge::expects_reply(kind));
  }

  // The replies of every agent that owes one, by agent (received[a] for the others stays empty).
  // The first failure (lowest subsystem) is thrown once every reply is in.
  std::vector<bridge::Reply> collect() {
    std::vector<bridge::Reply> received(agents.size());
    std::size_t owed = 0;
    for (const auto& a : agents) owed += a.owes ? 1 : 0;
    for (; owed > 0; --owed) {
      const auto m =
          world->receive(ipc::mpi::kAnySource, bridge::kReplyTag, [this] { check_agents(); });
      const std::size_t a = static_cast<std::size_t>(m->source) - 1;
      if (a >= agents.size() || !agents[a].owes) {
        broken = true;
        throw std::runtime_error(
            fmt::format("bridge: an unexpected reply from rank {} during {}", m->source, during()));
      }
      agents[a].owes = false;
      received[a] = bridge::decode_reply(m->bytes);
      received[a].busy_ns = bridge::elapsed_ns(agents[a].sent) - received[a].busy_ns;  // MPI time
    }
    const bridge::Reply* first = nullptr;
    std::size_t first_agent = 0;
    for (std::size_t a = 0; a < agents.size(); ++a) {
      const auto& r = received[a];
      if (!r.ok && (first == nullptr || r.failed_subsystem < first->failed_subsystem)) {
        first = &r;
        first_agent = a;
      }
    }
    if (first != nullptr) {
      broken = true;
      const Agent& a = agents[first_agent];
      throw RankFailure(fmt::format("{}: {}", name(a), first->error), a.info.rank,
                        first->failed_subsystem, accepted_steps + 1, accepted_time);
    }
    return received;
  }

  // One request to agent a and its reply.
  bridge::Reply exchange(std::size_t a, const bridge::Request& rq) {
    std::vector<std::vector<std::byte>> messages{bridge::encode(rq)};
    send({a}, messages, true);
    return std::move(collect()[a]);
  }

  void invalidate() {
    for (auto& a : agents) a.states_valid = a.stats_valid = false;
  }

  void ensure_stats(std::size_t a) {
    if (agents[a].stats_valid || broken) return;
    bridge::Request rq;
    rq.kind = bridge::RequestKind::kStats;
    const bridge::Reply r = exchange(a, rq);
    if (r.totals.size() != agents[a].group.size() || r.snapshot_ns.size() != r.totals.size()) {
      throw std::runtime_error(
          fmt::format("bridge: {} sent statistics of the wrong size", name(agents[a])));
    }
    for (std::size_t j = 0; j < r.totals.size(); ++j) {
      totals[agents[a].group[j]] = r.totals[j];
      snapshot[agents[a].group[j]] = r.snapshot_ns[j];
    }
    agents[a].stats_valid = true;
  }

  // Tells every agent still there to end its workers and leave. With an agent gone, MPI_Finalize
  // would wait for it: rank 0 and the agents then leave without it (the reason tells them). A
  // hung agent is ended last: SIGKILL on this host (its workers die with it, PR_SET_PDEATHSIG);
  // on another host MPI_Abort when rank 0 leaves, after its results and message (mpirun then
  // kills every rank).
  void shutdown(const std::string& reason) noexcept {
    const bool lost =
        std::any_of(agents.begin(), agents.end(), [](const Agent& a) { return a.gone; });
    if (lost) world->abandon();
    try {
      bridge::Request rq;
      rq.kind = bridge::RequestKind::kShutdown;
      rq.reason = lost ? "a rank is gone" : reason;
      const auto bytes = bridge::encode(rq);
      std::vector<std::size_t> alive;
      std::vector<std::vector<std::byte>> messages;
      for (std::size_t a = 0; a < agents.size(); ++a) {
        if (agents[a].gone) continue;
        alive.push_back(a);
        messages.push_back(bytes);
      }
      send(alive, messages, false);
    } catch (const std::exception&) {
      world->abandon();  // an agent did not take it: MPI_Finalize would wait for it
    }
    for (const auto& a : agents) {
      if (!a.hung) continue;
      if (same_host(a)) {
        ::kill(a.info.pid, SIGKILL);
      } else {
        world->abort_at_exit(1);
      }
    }
  }
};

MpiExecutor::MpiExecutor(ipc::mpi::World& world, std::span<const AgentInfo> agents,
                         const system::CoupledSystem& system,
                         std::span<const library::ModelDescription> models,
                         std::span<const double> u0, const ProcessOptions& workers,
                         const MpiOptions& options)
    : Executor(workers.rollback), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.world = &world;
  s.options = options;
  s.silence_limit = bridge::agent_silence_limit(workers.hang_timeout);
  const char* remote = std::getenv("MACROSTEP_BRIDGE_AGENTS_REMOTE");
  s.all_remote = remote != nullptr && std::string(remote) == "1";
  world.set_poll_interval(options.poll_interval);
  const std::size_t n = system.subsystem_count();
  const auto groups = place_subsystems(n, agents.size(), options.subsystem_ranks);
  const auto specs = worker_specs(system, models, u0);
  s.owner.resize(n);
  s.local.resize(n);
  s.outputs.resize(n);
  s.state_sizes.resize(n);
  s.state_offset.resize(n);
  s.totals.resize(n);
  s.snapshot.resize(n);
  std::vector<std::vector<std::byte>> setups;
  std::vector<std::size_t> all;
  for (std::size_t a = 0; a < agents.size(); ++a) {
    State::Agent agent;
    agent.info = agents[a];
    agent.group = groups[a];
    bridge::Setup setup;
    setup.run = true;
    std::size_t offset = 0;
    for (std::size_t j = 0; j < agent.group.size(); ++j) {
      const std::size_t i = agent.group[j];
      s.owner[i] = a;
      s.local[i] = j;
      s.outputs[i] = specs[i].outputs;
      s.state_sizes[i] = specs[i].states;
      s.state_offset[i] = offset;
      offset += specs[i].states;
      // The same configuration a worker of the process executor gets (the agent's executor adds
      // pinning on its node).
      setup.subsystems.push_back(static_cast<std::uint32_t>(i));
      setup.configs.push_back(worker::encode_config(worker_setup(specs[i], i, n, workers)));
      setup.outputs.push_back(static_cast<std::uint32_t>(specs[i].outputs));
      setup.states.push_back(specs[i].states);
    }
    setup.initial_time = system.subsystem(0).initial_time();
    // A map's entries of this group only (the agent numbers its subsystems 1..k).
    setup.pin =
        placement::group_request(placement::parse_pin(options.pin), agent.group, n).to_string();
    setup.pus_per_subsystem = static_cast<std::uint32_t>(options.pus_per_subsystem);
    setup.extra_runs = workers.extra_runs;
    setup.hang_timeout_ms = static_cast<std::uint64_t>(workers.hang_timeout.count());
    setup.handshake_timeout_ms = static_cast<std::uint64_t>(workers.handshake_timeout.count());
    setups.push_back(bridge::encode(setup));
    all.push_back(a);
    s.agents.push_back(std::move(agent));
  }
  s.accepted_time = n > 0 ? system.subsystem(0).initial_time() : 0.0;
  // The setups go out on the control tag (the agents wait there); the ready replies come back
  // as replies.
  std::vector<int> ranks;
  for (const auto& a : s.agents) ranks.push_back(a.info.rank);
  bridge::mark_agents_told();
  // Starting the workers may take their handshake timeout before an agent can answer.
  for (auto& a : s.agents) {
    a.sending = true;
    a.heard = Clock::now() + workers.handshake_timeout;
  }
  world.send_all(ranks, bridge::kControlTag, setups, [&s] { s.check_agents(); });
  for (auto& a : s.agents) {
    a.sending = false;
    a.owes = true;
  }
  try {
    const auto ready = s.collect();
    for (std::size_t a = 0; a < s.agents.size(); ++a) {
      s.agents[a].placement = ready[a].placement;
      s.agents[a].placement_json = nlohmann::ordered_json::parse(ready[a].placement_json);
      s.agents[a].worker_pids = ready[a].worker_pids;
    }
  } catch (const std::exception& e) {
    s.shutdown("the run could not start");
    throw std::runtime_error(fmt::format("--executor mpi: {}", e.what()));
  }
}

MpiExecutor::~MpiExecutor() {
  if (state_) state_->shutdown(state_->broken ? "the run failed" : worker::kNormalShutdown);
}

std::size_t MpiExecutor::subsystem_count() const {
  return state_->owner.size();
}

void MpiExecutor::do_step(double t_end, std::span<const SubsystemCommand> commands,
                          PassOutcome& outcome) {
  State& s = *state_;
  const std::size_t n = s.owner.size();
  if (s.broken) throw std::logic_error("MpiExecutor::step: the bridge has failed");
  ++s.attempt;
  s.step_begin = s.accepted_time;
  s.step_end = t_end;
  s.stepped = true;
  s.invalidate();
  auto& cmd = *s.command;
  cmd.kind = ipc::CommandKind::kStep;
  cmd.t_end = t_end;
  cmd.id = s.attempt;
  std::vector<std::vector<std::byte>> messages;
  std::vector<std::size_t> all;
  for (std::size_t a = 0; a < s.agents.size(); ++a) {
    bridge::Request rq;
    rq.kind = bridge::RequestKind::kStep;
    rq.t_end = t_end;
    rq.macro_step = s.accepted_steps + 1;
    for (std::size_t i : s.agents[a].group) {
      worker::pack_runs(cmd, commands[i].nominal, commands[i].extra);
      rq.commands.push_back(bridge::wire(cmd));
    }
    messages.push_back(bridge::encode(rq));
    all.push_back(a);
  }
  s.send(all, messages, true);
  const auto replies = s.collect();
  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(n);
  std::int64_t comm = 0;
  for (std::size_t a = 0; a < s.agents.size(); ++a) {
    const auto& r = replies[a];
    const auto& group = s.agents[a].group;
    s.check_reply_count(a, r.replies.size());
    comm = std::max(comm, r.busy_ns + r.communication_ns);
    for (std::size_t j = 0; j < group.size(); ++j) {
      const std::size_t i = group[j];
      bridge::read_wire(r.replies[j], *s.reply);
      read_step_reply(*s.reply, i, s.outputs[i], outcome);
    }
  }
  outcome.communication_ns = std::max<std::int64_t>(0, comm);
  s.communication_ns += outcome.communication_ns;
}

// One evaluate request to each agent that hosts an asked subsystem (the others get nothing),
// their replies read as the process executor reads its workers'.
void MpiExecutor::do_evaluate_outputs(std::span<const std::vector<double>> inputs,
                                      runner::EventSide side, EvaluationOutcome& outcome) {
  State& s = *state_;
  const std::size_t n = s.owner.size();
  if (s.broken) throw std::logic_error("MpiExecutor::evaluate_outputs: the bridge has failed");
  auto& cmd = *s.command;
  cmd.kind = ipc::CommandKind::kEvaluate;
  cmd.after_event = side == runner::EventSide::kAfter ? 1 : 0;
  cmd.id = s.attempt;
  std::vector<std::vector<std::byte>> messages;
  std::vector<std::size_t> asked;
  for (std::size_t a = 0; a < s.agents.size(); ++a) {
    bridge::Request rq;
    rq.kind = bridge::RequestKind::kEvaluate;
    rq.t_end = s.step_end;
    rq.macro_step = s.accepted_steps + 1;
    bool any = false;
    for (std::size_t i : s.agents[a].group) {
      rq.commands.emplace_back();
      if (inputs[i].empty()) continue;
      cmd.set_inputs(inputs[i]);
      rq.commands.back() = bridge::wire(cmd);
      any = true;
    }
    if (!any) continue;
    messages.push_back(bridge::encode(rq));
    asked.push_back(a);
  }
  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(n);
  if (asked.empty()) return;
  s.send(asked, messages, true);
  const auto replies = s.collect();
  for (std::size_t a : asked) {
    const auto& r = replies[a];
    const auto& group = s.agents[a].group;
    s.check_reply_count(a, r.replies.size());
    for (std::size_t j = 0; j < group.size(); ++j) {
      const std::size_t i = group[j];
      if (inputs[i].empty()) continue;
      bridge::read_wire(r.replies[j], *s.reply);
      read_evaluation_reply(*s.reply, i, s.outputs[i], outcome);
    }
  }
}

void MpiExecutor::do_accept() {
  State& s = *state_;
  if (s.broken) throw std::logic_error("MpiExecutor::accept: the bridge has failed");
  s.stepped = false;
  ++s.accepted_steps;
  s.accepted_time = s.step_end;
  s.invalidate();
  s.broadcast(bridge::RequestKind::kAccept);
}

void MpiExecutor::do_reject() {
  State& s = *state_;
  if (s.broken) throw std::logic_error("MpiExecutor::reject: the bridge has failed");
  s.stepped = false;
  s.invalidate();
  s.broadcast(bridge::RequestKind::kReject);
}

double MpiExecutor::accepted_time() const {
  return state_->accepted_time;
}

void MpiExecutor::do_accepted_state(std::size_t i, std::span<double> z) const {
  State& s = *state_;
  auto& agent = s.agents[s.owner[i]];
  if (!agent.states_valid) {
    bridge::Request rq;
    rq.kind = bridge::RequestKind::kStates;
    bridge::Reply r = s.exchange(s.owner[i], rq);
    agent.states = std::move(r.states);
    agent.states_valid = true;
  }
  if (z.size() != s.state_sizes[i] || agent.states.size() < s.state_offset[i] + s.state_sizes[i]) {
    throw std::invalid_argument("MpiExecutor::accepted_state: wrong size");
  }
  std::copy_n(agent.states.begin() + static_cast<std::ptrdiff_t>(s.state_offset[i]),
              s.state_sizes[i], z.begin());
}

ida::AdvanceStats MpiExecutor::do_total_stats(std::size_t i) const {
  state_->ensure_stats(state_->owner[i]);
  return state_->totals[i];
}

std::int64_t MpiExecutor::do_snapshot_ns(std::size_t i) const {
  state_->ensure_stats(state_->owner[i]);
  return state_->snapshot[i];
}

std::size_t MpiExecutor::do_export_state(std::size_t i, const std::string& path) {
  State& s = *state_;
  bridge::Request rq;
  rq.kind = bridge::RequestKind::kExport;
  rq.subsystem = static_cast<std::uint32_t>(s.local[i]);
  rq.path = path;
  return s.exchange(s.owner[i], rq).exported_bytes;
}

void MpiExecutor::do_import_state(std::size_t i, const std::string& path) {
  State& s = *state_;
  bridge::Request rq;
  rq.kind = bridge::RequestKind::kImport;
  rq.subsystem = static_cast<std::uint32_t>(s.local[i]);
  rq.path = path;
  s.accepted_time = s.exchange(s.owner[i], rq).time;
  s.invalidate();
}

std::string MpiExecutor::describe_placement() const {
  const State& s = *state_;
  std::string out = fmt::format(
      "MPI bridge: {} ranks; rank 0 (master) on {} (pid {}); {}\n", s.agents.size() + 1,
      s.world->host(), getpid(),
      s.options.subsystem_ranks.empty() ? "contiguous blocks" : "ranks from [executor] ranks");
  for (const auto& a : s.agents) {
    out += fmt::format("  {}\n", s.name(a));
    std::istringstream lines(a.placement);
    for (std::string line; std::getline(lines, line);) out += fmt::format("    {}\n", line);
  }
  if (!s.agents.empty())
    out += "  (each node's placement numbers the subsystems of its group 1..k)\n";
  return out;
}

nlohmann::ordered_json MpiExecutor::placement_json() const {
  const State& s = *state_;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  ranks.push_back({{"rank", 0}, {"role", "master"}, {"host", s.world->host()}, {"pid", getpid()}});
  for (const auto& a : s.agents) {
    std::vector<std::size_t> numbers;
    for (std::size_t i : a.group) numbers.push_back(i + 1);
    ranks.push_back({{"rank", a.info.rank},
                     {"role", "node agent"},
                     {"host", a.info.host},
                     {"pid", a.info.pid},
                     {"subsystems", numbers},
                     {"worker_pids", a.worker_pids},
                     {"placement", a.placement_json}});
  }
  return {{"executor", "mpi"},
          {"policy", s.options.subsystem_ranks.empty() ? "contiguous blocks" : "configured"},
          {"pin", s.options.pin},
          {"ranks", ranks}};
}

std::int64_t MpiExecutor::communication_ns() const {
  return state_->communication_ns;
}

}  // namespace macrostep::executors
