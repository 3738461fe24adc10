// The bridge's messages between rank 0 and the node agents as plain structs, and their
// Cap'n Proto encoding (ipc/schema/bridge.capnp). Both sides use these functions, so the two
// ends cannot disagree on a field. Decoders throw std::runtime_error on a malformed message.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/ipc/protocol.hpp"

namespace macrostep::executors::bridge {

// MPI tags of the bridge (MPI_COMM_WORLD): hello / setup / ready, requests, replies, and an
// agent's sign of life (an empty message) while it waits for its workers.
inline constexpr int kControlTag = 7001;
inline constexpr int kRequestTag = 7002;
inline constexpr int kReplyTag = 7003;
inline constexpr int kAliveTag = 7004;
// Raised whenever a message changes meaning (part of bridge_version()).
// 3: the evaluate request (output evaluations of the consistent update, METHODS D-1).
inline constexpr std::uint32_t kBridgeVersion = 3;

// The hung-agent rule (mpi_executor.hpp): an agent gives a sign of life every quarter of the
// workers' hang timeout while it waits for them, and rank 0 takes an agent that owes a reply and
// has been silent for twice the hang timeout for hung. 0 = no signs, no check.
inline std::chrono::milliseconds alive_interval(std::chrono::milliseconds hang_timeout) {
  return hang_timeout / 4;
}
inline std::chrono::milliseconds agent_silence_limit(std::chrono::milliseconds hang_timeout) {
  return hang_timeout * 2;
}

// Nanoseconds on the steady clock since `since`: a Reply's busy_ns (the agent's pass) and rank
// 0's MPI time are measured by the same function.
inline std::int64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              since)
      .count();
}

// Rank 0: records that the agents have been given their setup (a run's, or the dismissal when
// there is no run), which happens at most once per process; returns whether it had happened.
bool mark_agents_told();

struct Hello {
  std::string version, host;
  int pid = 0;
  int rank = 0;
};

struct Setup {
  bool run = false;
  std::string reason;
  std::vector<std::uint32_t> subsystems;        // global 0-based
  std::vector<std::vector<std::byte>> configs;  // SubsystemConfig each
  std::vector<std::uint32_t> outputs;
  std::vector<std::uint64_t> states;
  double initial_time = 0.0;
  std::string pin = "none";
  std::uint32_t pus_per_subsystem = 1, extra_runs = 0;
  std::uint64_t hang_timeout_ms = 0, handshake_timeout_ms = 0;
};

enum class RequestKind : std::uint8_t {
  kStep,
  kAccept,
  kReject,
  kStates,
  kStats,
  kExport,
  kImport,
  kShutdown,
  kEvaluate  // after a step: StepCommand kEvaluate per asked group subsystem (others empty)
};

struct Request {
  RequestKind kind = RequestKind::kStep;
  double t_end = 0.0;
  // kStep, kEvaluate: StepCommand wire bytes per group subsystem (kEvaluate: empty if not asked)
  std::vector<std::vector<std::byte>> commands;
  std::uint32_t subsystem = 0;  // kExport / kImport: index in the group
  std::string path, reason;
  std::uint64_t macro_step = 0;
};
// Whether the agent answers a request of this kind.
inline bool expects_reply(RequestKind k) {
  return k != RequestKind::kAccept && k != RequestKind::kReject && k != RequestKind::kShutdown;
}

struct Reply {
  bool ok = true;
  std::string error;
  std::uint32_t failed_subsystem = 0;  // global 0-based
  bool worker_failure = false;
  // kStep, kEvaluate: StepReply wire bytes per group subsystem (kEvaluate: empty if not asked)
  std::vector<std::vector<std::byte>> replies;
  std::vector<double> states;
  std::vector<ida::AdvanceStats> totals;
  std::vector<std::int64_t> snapshot_ns;
  double time = 0.0;
  std::uint64_t exported_bytes = 0;
  std::int64_t communication_ns = 0;  // the agent's ring communication in the step
  std::int64_t busy_ns = 0;           // the agent's wall time for the request
  std::string placement, placement_json;
  std::vector<int> worker_pids;
};

std::vector<std::byte> encode(const Hello& m);
std::vector<std::byte> encode(const Setup& m);
std::vector<std::byte> encode(const Request& m);
std::vector<std::byte> encode(const Reply& m);
Hello decode_hello(std::span<const std::byte> bytes);
Setup decode_setup(std::span<const std::byte> bytes);
Request decode_request(std::span<const std::byte> bytes);
Reply decode_reply(std::span<const std::byte> bytes);

// The wire bytes of a ring message, and back (the length is checked against the header).
std::vector<std::byte> wire(const ipc::StepCommand& c);
std::vector<std::byte> wire(const ipc::StepReply& r);
void read_wire(std::span<const std::byte> bytes, ipc::StepCommand& c);
void read_wire(std::span<const std::byte> bytes, ipc::StepReply& r);

}  // namespace macrostep::executors::bridge
