// bridge_messages.hpp.
#include "bridge_messages.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <kj/exception.h>

#include <cstring>
#include <stdexcept>

#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/bridge.capnp.h"

namespace macrostep::executors::bridge {

namespace schema = ipc::schema;

namespace {

capnp::Data::Reader data_of(const std::vector<std::byte>& v) {
  return {reinterpret_cast<const kj::byte*>(v.data()), v.size()};
}

std::vector<std::byte> bytes_of(capnp::Data::Reader d) {
  std::vector<std::byte> out(d.size());
  if (d.size() > 0) std::memcpy(out.data(), d.begin(), d.size());
  return out;
}

// Reads a flat-array message of type T and hands its root to `read`; a malformed message is a
// std::runtime_error naming `what`.
template <typename T, typename F>
auto read_message(std::span<const std::byte> bytes, const char* what, F&& read) {
  if (bytes.size() % sizeof(capnp::word) != 0 || bytes.empty()) {
    throw std::runtime_error(fmt::format("bridge: malformed {} ({} bytes)", what, bytes.size()));
  }
  const std::vector<capnp::word> words = ipc::aligned_words(bytes);
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
    return read(reader.getRoot<T>());
  } catch (const kj::Exception& e) {
    throw std::runtime_error(
        fmt::format("bridge: malformed {}: {}", what, e.getDescription().cStr()));
  }
}

}  // namespace

std::vector<std::byte> encode(const Hello& m) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::BridgeHello>();
  b.setVersion(m.version);
  b.setHost(m.host);
  b.setPid(m.pid);
  b.setRank(static_cast<std::uint32_t>(m.rank));
  return ipc::to_flat_bytes(message);
}

Hello decode_hello(std::span<const std::byte> bytes) {
  return read_message<schema::BridgeHello>(bytes, "hello", [](schema::BridgeHello::Reader r) {
    return Hello{r.getVersion(), r.getHost(), r.getPid(), static_cast<int>(r.getRank())};
  });
}

std::vector<std::byte> encode(const Setup& m) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::BridgeSetup>();
  b.setRun(m.run);
  b.setReason(m.reason);
  auto subs = b.initSubsystems(static_cast<unsigned>(m.subsystems.size()));
  auto configs = b.initConfigs(static_cast<unsigned>(m.configs.size()));
  auto outputs = b.initOutputs(static_cast<unsigned>(m.outputs.size()));
  auto states = b.initStates(static_cast<unsigned>(m.states.size()));
  for (unsigned k = 0; k < m.subsystems.size(); ++k) subs.set(k, m.subsystems[k]);
  for (unsigned k = 0; k < m.configs.size(); ++k) configs.set(k, data_of(m.configs[k]));
  for (unsigned k = 0; k < m.outputs.size(); ++k) outputs.set(k, m.outputs[k]);
  for (unsigned k = 0; k < m.states.size(); ++k) states.set(k, m.states[k]);
  b.setInitialTime(m.initial_time);
  b.setPin(m.pin);
  b.setPusPerSubsystem(m.pus_per_subsystem);
  b.setHangTimeoutMs(m.hang_timeout_ms);
  b.setHandshakeTimeoutMs(m.handshake_timeout_ms);
  b.setExtraRuns(m.extra_runs);
  return ipc::to_flat_bytes(message);
}

Setup decode_setup(std::span<const std::byte> bytes) {
  return read_message<schema::BridgeSetup>(bytes, "setup", [](schema::BridgeSetup::Reader r) {
    Setup m;
    m.run = r.getRun();
    m.reason = r.getReason();
    for (auto s : r.getSubsystems()) m.subsystems.push_back(s);
    for (auto c : r.getConfigs()) m.configs.push_back(bytes_of(c));
    for (auto o : r.getOutputs()) m.outputs.push_back(o);
    for (auto s : r.getStates()) m.states.push_back(s);
    const std::size_t n = m.subsystems.size();
    if (m.configs.size() != n || m.outputs.size() != n || m.states.size() != n) {
      throw std::runtime_error("bridge: malformed setup (list sizes differ)");
    }
    m.initial_time = r.getInitialTime();
    m.pin = r.getPin();
    m.pus_per_subsystem = r.getPusPerSubsystem();
    m.hang_timeout_ms = r.getHangTimeoutMs();
    m.handshake_timeout_ms = r.getHandshakeTimeoutMs();
    m.extra_runs = r.getExtraRuns();
    return m;
  });
}

std::vector<std::byte> encode(const Request& m) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::BridgeRequest>();
  b.setKind(static_cast<schema::BridgeRequest::Kind>(m.kind));
  b.setTEnd(m.t_end);
  auto commands = b.initCommands(static_cast<unsigned>(m.commands.size()));
  for (unsigned k = 0; k < m.commands.size(); ++k) commands.set(k, data_of(m.commands[k]));
  b.setSubsystem(m.subsystem);
  b.setPath(m.path);
  b.setReason(m.reason);
  b.setMacroStep(m.macro_step);
  return ipc::to_flat_bytes(message);
}

Request decode_request(std::span<const std::byte> bytes) {
  return read_message<schema::BridgeRequest>(bytes, "request", [](schema::BridgeRequest::Reader r) {
    Request m;
    const auto kind = static_cast<std::uint16_t>(r.getKind());
    if (kind > static_cast<std::uint16_t>(RequestKind::kEvaluate)) {
      throw std::runtime_error(fmt::format("bridge: unknown request kind {}", kind));
    }
    m.kind = static_cast<RequestKind>(kind);
    m.t_end = r.getTEnd();
    for (auto c : r.getCommands()) m.commands.push_back(bytes_of(c));
    m.subsystem = r.getSubsystem();
    m.path = r.getPath();
    m.reason = r.getReason();
    m.macro_step = r.getMacroStep();
    return m;
  });
}

std::vector<std::byte> encode(const Reply& m) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<schema::BridgeReply>();
  b.setOk(m.ok);
  b.setError(m.error);
  b.setFailedSubsystem(m.failed_subsystem);
  b.setWorkerFailure(m.worker_failure);
  auto replies = b.initReplies(static_cast<unsigned>(m.replies.size()));
  for (unsigned k = 0; k < m.replies.size(); ++k) replies.set(k, data_of(m.replies[k]));
  auto states = b.initStates(static_cast<unsigned>(m.states.size()));
  for (unsigned k = 0; k < m.states.size(); ++k) states.set(k, m.states[k]);
  auto totals = b.initTotals(static_cast<unsigned>(m.totals.size()));
  for (unsigned k = 0; k < m.totals.size(); ++k) {
    totals.set(k, {reinterpret_cast<const kj::byte*>(&m.totals[k]), sizeof(ida::AdvanceStats)});
  }
  auto snapshots = b.initSnapshotNs(static_cast<unsigned>(m.snapshot_ns.size()));
  for (unsigned k = 0; k < m.snapshot_ns.size(); ++k) snapshots.set(k, m.snapshot_ns[k]);
  b.setTime(m.time);
  b.setExportedBytes(m.exported_bytes);
  b.setCommunicationNs(m.communication_ns);
  b.setBusyNs(m.busy_ns);
  b.setPlacement(m.placement);
  b.setPlacementJson(m.placement_json);
  auto pids = b.initWorkerPids(static_cast<unsigned>(m.worker_pids.size()));
  for (unsigned k = 0; k < m.worker_pids.size(); ++k) pids.set(k, m.worker_pids[k]);
  return ipc::to_flat_bytes(message);
}

Reply decode_reply(std::span<const std::byte> bytes) {
  return read_message<schema::BridgeReply>(bytes, "reply", [](schema::BridgeReply::Reader r) {
    Reply m;
    m.ok = r.getOk();
    m.error = r.getError();
    m.failed_subsystem = r.getFailedSubsystem();
    m.worker_failure = r.getWorkerFailure();
    for (auto d : r.getReplies()) m.replies.push_back(bytes_of(d));
    for (double s : r.getStates()) m.states.push_back(s);
    for (auto d : r.getTotals()) {
      if (d.size() != sizeof(ida::AdvanceStats)) {
        throw std::runtime_error("bridge: malformed reply (statistics of another build)");
      }
      ida::AdvanceStats s;
      std::memcpy(static_cast<void*>(&s), d.begin(), sizeof s);
      m.totals.push_back(s);
    }
    for (auto ns : r.getSnapshotNs()) m.snapshot_ns.push_back(ns);
    m.time = r.getTime();
    m.exported_bytes = r.getExportedBytes();
    m.communication_ns = r.getCommunicationNs();
    m.busy_ns = r.getBusyNs();
    m.placement = r.getPlacement();
    m.placement_json = r.getPlacementJson();
    for (auto p : r.getWorkerPids()) m.worker_pids.push_back(p);
    return m;
  });
}

namespace {

template <typename T>
std::vector<std::byte> wire_of(const T& m) {
  std::vector<std::byte> out(m.wire_bytes());
  std::memcpy(out.data(), static_cast<const void*>(&m), out.size());
  return out;
}

// Copies a ring message's wire bytes into `m`, checking that the header's length matches.
template <typename T>
void read_wire_of(std::span<const std::byte> bytes, T& m, std::size_t header, const char* what) {
  if (bytes.size() < header || bytes.size() > sizeof(T)) {
    throw std::runtime_error(fmt::format("bridge: malformed {} ({} bytes)", what, bytes.size()));
  }
  std::memcpy(static_cast<void*>(&m), bytes.data(), bytes.size());
  if (m.wire_bytes() != bytes.size()) {
    throw std::runtime_error(fmt::format("bridge: malformed {} ({} bytes, its header says {})",
                                         what, bytes.size(), m.wire_bytes()));
  }
}

}  // namespace

std::vector<std::byte> wire(const ipc::StepCommand& c) {
  return wire_of(c);
}
std::vector<std::byte> wire(const ipc::StepReply& r) {
  return wire_of(r);
}
void read_wire(std::span<const std::byte> bytes, ipc::StepCommand& c) {
  read_wire_of(bytes, c, offsetof(ipc::StepCommand, points), "step command");
}
void read_wire(std::span<const std::byte> bytes, ipc::StepReply& r) {
  read_wire_of(bytes, r, offsetof(ipc::StepReply, data), "step reply");
}

}  // namespace macrostep::executors::bridge
