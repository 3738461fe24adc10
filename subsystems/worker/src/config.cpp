// Cap'n Proto encoding of a subsystem's configuration (ipc/schema/control.capnp).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/control.capnp.h"
#include "macrostep/worker/worker.hpp"
#include "model_config.hpp"

namespace macrostep::worker {

namespace schema = macrostep::ipc::schema;

namespace {

// Runs `decode` and turns Cap'n Proto's kj::Exception (a message whose pointers, lengths or
// nesting are out of bounds; it is no std::exception) into std::runtime_error naming `what`.
template <class Decode>
auto refusing_malformed(const char* what, Decode decode) {
  try {
    return decode();
  } catch (const kj::Exception& e) {
    throw std::runtime_error(std::string(what) + ": malformed message (" +
                             e.getDescription().cStr() + ")");
  }
}

}  // namespace

std::vector<std::byte> encode_config(const WorkerSetup& s) {
  if (s.model == nullptr) throw std::invalid_argument("encode_config: no model");
  capnp::MallocMessageBuilder message;
  auto cfg = message.initRoot<schema::SubsystemConfig>();
  cfg.setProtocolVersion(ipc::kProtocolVersion);
  cfg.setIndex(s.index);
  cfg.setSubsystemCount(s.subsystems);
  cfg.setMasterPid(s.master_pid);
  encode_model(*s.model, cfg.initModel());
  auto inputs = cfg.initInitialInputs(static_cast<unsigned>(s.initial_inputs.size()));
  for (unsigned j = 0; j < s.initial_inputs.size(); ++j) inputs.set(j, s.initial_inputs[j]);
  auto solver = cfg.initSolver();
  solver.setRtol(s.solver.rtol);
  solver.setAtolPos(s.solver.atol_pos);
  solver.setAtolVel(s.solver.atol_vel);
  solver.setDenseLinearSolver(s.solver.linear_solver == ida::LinearSolver::kDense);
  solver.setMaxOrder(s.solver.max_order);
  solver.setMaxSteps(s.solver.max_steps);
  solver.setInitialStep(s.solver.initial_step);
  solver.setStopAdjustment(s.solver.stop_adjustment);
  solver.setOvershoot(s.solver.overshoot);
  cfg.setRollback(s.rollback);
  auto jumps = cfg.initJumps();
  jumps.setPolicy(static_cast<std::uint8_t>(s.jumps.policy));
  jumps.setMicroSteps(s.jumps.micro_steps);
  cfg.setOutputInterval(s.output_interval);
  auto cpus = cfg.initCpuset(static_cast<unsigned>(s.cpuset.size()));
  for (unsigned j = 0; j < s.cpuset.size(); ++j) cpus.set(j, s.cpuset[j]);
  cfg.setExtraRuns(s.extra_runs);
  cfg.setThreads(s.threads);
  cfg.setProcesses(s.processes);
  cfg.setRecoveryPath(s.recovery_path);
  cfg.setRecoveryIntervalMs(s.recovery_interval_ms);

  return ipc::to_flat_bytes(message);
}

namespace {

DecodedConfig decode_config_message(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0 ||
      reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) != 0) {
    throw std::runtime_error("subsystem configuration: malformed message (" +
                             std::to_string(bytes) + " bytes)");
  }
  // A traversal of the message several times over, and no more: a list of zero-sized structs
  // costs no bytes but one word of traversal per element, so a fixed allowance (the default is
  // 8 M words) would let a message of a few bytes claim millions of elements (a chain force
  // list of 8 M impulses took seconds, found by fuzz_worker_decoder).
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 8 * (bytes / sizeof(capnp::word)) + 1024;
  capnp::FlatArrayMessageReader reader(
      kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(data),
                                      bytes / sizeof(capnp::word)),
      options);
  const auto cfg = reader.getRoot<schema::SubsystemConfig>();
  DecodedConfig d;
  d.protocol_version = cfg.getProtocolVersion();
  if (d.protocol_version != ipc::kProtocolVersion) {
    throw std::runtime_error("subsystem configuration: protocol version " +
                             std::to_string(d.protocol_version) + ", this worker speaks " +
                             std::to_string(ipc::kProtocolVersion));
  }
  d.index = cfg.getIndex();
  d.subsystems = cfg.getSubsystemCount();
  d.master_pid = cfg.getMasterPid();
  d.model = decode_model(cfg.getModel());
  d.subsystem = library::build_subsystem(d.model);
  for (double u : cfg.getInitialInputs()) d.initial_inputs.push_back(u);
  if (d.initial_inputs.size() != d.subsystem->input_size()) {
    throw std::runtime_error("subsystem configuration: initial inputs of the wrong size");
  }
  const auto so = cfg.getSolver();
  d.solver.rtol = so.getRtol();
  d.solver.atol_pos = so.getAtolPos();
  d.solver.atol_vel = so.getAtolVel();
  d.solver.linear_solver =
      so.getDenseLinearSolver() ? ida::LinearSolver::kDense : ida::LinearSolver::kKlu;
  d.solver.max_order = so.getMaxOrder();
  d.solver.max_steps = static_cast<long>(so.getMaxSteps());
  d.solver.initial_step = so.getInitialStep();
  d.solver.stop_adjustment = so.getStopAdjustment();
  d.solver.overshoot = so.getOvershoot();
  d.rollback = cfg.getRollback();
  const auto jumps = cfg.getJumps();
  if (jumps.getPolicy() > static_cast<std::uint8_t>(runner::JumpPolicy::kRestartAuto)) {
    throw std::runtime_error("subsystem configuration: unknown jump policy");
  }
  d.jumps.policy = static_cast<runner::JumpPolicy>(jumps.getPolicy());
  d.jumps.micro_steps = jumps.getMicroSteps();
  d.output_interval = cfg.getOutputInterval();
  if (!(d.output_interval >= 0.0) || !std::isfinite(d.output_interval)) {
    throw std::runtime_error("subsystem configuration: bad output interval");
  }
  for (auto c : cfg.getCpuset()) d.cpuset.push_back(c);
  d.extra_runs = cfg.getExtraRuns();
  d.threads = cfg.getThreads();
  d.processes = cfg.getProcesses();
  d.recovery_path = cfg.getRecoveryPath();
  d.recovery_interval_ms = cfg.getRecoveryIntervalMs();
  return d;
}

}  // namespace

DecodedConfig decode_config(const std::byte* data, std::size_t bytes) {
  return refusing_malformed("subsystem configuration",
                            [&] { return decode_config_message(data, bytes); });
}

std::vector<std::byte> encode_handshake(const HandshakeInfo& info) {
  capnp::MallocMessageBuilder message;
  auto hs = message.initRoot<schema::Handshake>();
  hs.setProtocolVersion(info.protocol_version);
  hs.setLayoutVersion(info.layout_version);
  hs.setWorkerPid(info.pid);
  hs.setReady(info.ready);
  hs.setError(info.error.substr(0, 2000));
  hs.setStateSize(info.state_size);
  return ipc::to_flat_bytes(message);
}

HandshakeInfo decode_handshake(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0) {
    throw std::runtime_error("handshake: malformed message");
  }
  return refusing_malformed("handshake", [&] {
    capnp::FlatArrayMessageReader reader(kj::ArrayPtr<const capnp::word>(
        reinterpret_cast<const capnp::word*>(data), bytes / sizeof(capnp::word)));
    const auto hs = reader.getRoot<schema::Handshake>();
    HandshakeInfo info;
    info.protocol_version = hs.getProtocolVersion();
    info.layout_version = hs.getLayoutVersion();
    info.pid = hs.getWorkerPid();
    info.ready = hs.getReady();
    info.error = hs.getError().cStr();
    info.state_size = hs.getStateSize();
    return info;
  });
}

std::vector<std::byte> encode_shutdown(const std::string& reason) {
  capnp::MallocMessageBuilder message;
  message.initRoot<schema::Shutdown>().setReason(reason.substr(0, 512));
  return ipc::to_flat_bytes(message);
}

std::string decode_shutdown(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0) return {};
  return refusing_malformed("shutdown notice", [&] {
    capnp::FlatArrayMessageReader reader(kj::ArrayPtr<const capnp::word>(
        reinterpret_cast<const capnp::word*>(data), bytes / sizeof(capnp::word)));
    return std::string(reader.getRoot<schema::Shutdown>().getReason().cStr());
  });
}

}  // namespace macrostep::worker
