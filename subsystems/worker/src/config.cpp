// Cap'n Proto encoding of a subsystem's configuration (ipc/schema/control.capnp).
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "macrostep/ipc/schema/control.capnp.h"
#include "macrostep/worker/worker.hpp"

namespace macrostep::worker {

namespace schema = macrostep::ipc::schema;

std::string region_name(std::string_view kind, std::size_t index) {
  return std::string(kind) + "." + std::to_string(index);
}

std::size_t config_region_bytes(std::size_t message_bytes) {
  return sizeof(ConfigBlock) + message_bytes;
}

SubsystemLayout subsystem_layout(std::size_t state_size, std::size_t config_bytes) {
  const auto round = [](std::size_t n) { return (n + 63) / 64 * 64; };
  SubsystemLayout l;
  l.state_offset = round(sizeof(SubsystemBlock));
  l.config_offset = l.state_offset + round(std::max<std::size_t>(1, state_size) * sizeof(double));
  l.bytes = l.config_offset + config_region_bytes(config_bytes);
  return l;
}

std::vector<std::byte> encode_config(const WorkerSetup& s) {
  if (s.params == nullptr || !(s.first_mass < s.last_mass && s.last_mass <= s.params->size())) {
    throw std::invalid_argument("encode_config: no chain or bad mass range");
  }
  const auto& p = *s.params;
  capnp::MallocMessageBuilder message;
  auto cfg = message.initRoot<schema::SubsystemConfig>();
  cfg.setProtocolVersion(kProtocolVersion);
  cfg.setIndex(s.index);
  cfg.setSubsystemCount(s.subsystems);
  cfg.setMasterPid(s.master_pid);
  const auto m = static_cast<unsigned>(s.last_mass - s.first_mass);
  auto chain = cfg.initChain();
  chain.setChainSize(p.size());
  chain.setFirstMass(s.first_mass);
  chain.setLastMass(s.last_mass);
  auto mass = chain.initMass(m);
  auto x0 = chain.initX0(m);
  auto v0 = chain.initV0(m);
  auto forces = chain.initForces(m);
  for (unsigned k = 0; k < m; ++k) {
    const std::size_t g = s.first_mass + k;
    mass.set(k, p.mass[g]);
    x0.set(k, p.x0[g]);
    v0.set(k, p.v0[g]);
    const auto& f = p.forces[g];
    auto out = forces[k];
    auto h = out.initHarmonic(static_cast<unsigned>(f.harmonic.size()));
    for (unsigned j = 0; j < f.harmonic.size(); ++j) {
      h[j].setAmplitude(f.harmonic[j].amplitude);
      h[j].setOmega(f.harmonic[j].omega);
      h[j].setPhase(f.harmonic[j].phase);
    }
    auto c = out.initContact(static_cast<unsigned>(f.contact.size()));
    for (unsigned j = 0; j < f.contact.size(); ++j) {
      c[j].setAmplitude(f.contact[j].amplitude);
      c[j].setStiffness(f.contact[j].stiffness);
    }
    auto im = out.initImpulse(static_cast<unsigned>(f.impulse.size()));
    for (unsigned j = 0; j < f.impulse.size(); ++j) {
      im[j].setAmplitude(f.impulse[j].amplitude);
      im[j].setStart(f.impulse[j].start);
      im[j].setDuration(f.impulse[j].duration);
      im[j].setEdge(f.impulse[j].edge);
    }
    auto ms = out.initModifiedSine(static_cast<unsigned>(f.modified_sine.size()));
    for (unsigned j = 0; j < f.modified_sine.size(); ++j) {
      ms[j].setAmplitude(f.modified_sine[j].amplitude);
      ms[j].setOmega(f.modified_sine[j].omega);
      ms[j].setPhase(f.modified_sine[j].phase);
      ms[j].setExponent(f.modified_sine[j].exponent);
    }
  }
  auto element = chain.initElement(m + 1);
  for (unsigned k = 0; k <= m; ++k) {
    const auto& e = p.element[s.first_mass + k];
    element[k].setC(e.c);
    element[k].setD(e.d);
    element[k].setCc(e.C);
    element[k].setDd(e.D);
    element[k].setEx(e.ex);
    element[k].setEv(e.ev);
  }
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
  cfg.setRollback(s.rollback);
  auto cpus = cfg.initCpuset(static_cast<unsigned>(s.cpuset.size()));
  for (unsigned j = 0; j < s.cpuset.size(); ++j) cpus.set(j, s.cpuset[j]);
  cfg.setExtraRuns(s.extra_runs);
  cfg.setThreads(s.threads);

  const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.begin(), bytes.size());
  return out;
}

DecodedConfig decode_config(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0 ||
      reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) != 0) {
    throw std::runtime_error("subsystem configuration: malformed message (" +
                             std::to_string(bytes) + " bytes)");
  }
  // The message comes from our own master: allow a traversal of its full size several times
  // over (the default limit of 8 M words is too small for chains of 10^5 masses).
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 8 * (bytes / sizeof(capnp::word)) + (std::uint64_t{1} << 23);
  capnp::FlatArrayMessageReader reader(
      kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(data),
                                      bytes / sizeof(capnp::word)),
      options);
  const auto cfg = reader.getRoot<schema::SubsystemConfig>();
  DecodedConfig d;
  d.protocol_version = cfg.getProtocolVersion();
  if (d.protocol_version != kProtocolVersion) {
    throw std::runtime_error("subsystem configuration: protocol version " +
                             std::to_string(d.protocol_version) + ", this worker speaks " +
                             std::to_string(kProtocolVersion));
  }
  d.index = cfg.getIndex();
  d.subsystems = cfg.getSubsystemCount();
  d.master_pid = cfg.getMasterPid();
  const auto chain = cfg.getChain();
  const std::size_t n = chain.getChainSize();
  d.first_mass = chain.getFirstMass();
  d.last_mass = chain.getLastMass();
  if (!(d.first_mass < d.last_mass && d.last_mass <= n)) {
    throw std::runtime_error("subsystem configuration: bad mass range");
  }
  const std::size_t m = d.last_mass - d.first_mass;
  // Each list is fetched once: every get of a list pointer counts towards the traversal limit.
  const auto mass = chain.getMass();
  const auto x0 = chain.getX0();
  const auto v0 = chain.getV0();
  const auto forces = chain.getForces();
  const auto elements = chain.getElement();
  if (mass.size() != m || x0.size() != m || v0.size() != m || forces.size() != m ||
      elements.size() != m + 1) {
    throw std::runtime_error("subsystem configuration: parameter lists of the wrong size");
  }
  // A local chain that has a padding mass where the segment has a cut neighbour, so that the
  // segment [left, left + m) of it has the same inputs and equations as the original segment.
  const std::size_t left = d.first_mass > 0 ? 1 : 0;
  const std::size_t right = d.last_mass < n ? 1 : 0;
  const std::size_t nl = m + left + right;
  auto& lp = d.local;
  lp.mass.assign(nl, 1.0);
  lp.element.assign(nl + 1, library::ElementLaw{});
  lp.forces.assign(nl, library::MassForces{});
  lp.x0.assign(nl, 0.0);
  lp.v0.assign(nl, 0.0);
  for (unsigned k = 0; k < m; ++k) {
    lp.mass[left + k] = mass[k];
    lp.x0[left + k] = x0[k];
    lp.v0[left + k] = v0[k];
    const auto f = forces[k];
    auto& out = lp.forces[left + k];
    for (auto h : f.getHarmonic()) {
      out.harmonic.push_back({h.getAmplitude(), h.getOmega(), h.getPhase()});
    }
    for (auto c : f.getContact()) out.contact.push_back({c.getAmplitude(), c.getStiffness()});
    for (auto i : f.getImpulse()) {
      out.impulse.push_back({i.getAmplitude(), i.getStart(), i.getDuration(), i.getEdge()});
    }
    for (auto s : f.getModifiedSine()) {
      out.modified_sine.push_back({s.getAmplitude(), s.getOmega(), s.getPhase(), s.getExponent()});
    }
  }
  for (unsigned k = 0; k <= m; ++k) {
    const auto e = elements[k];
    auto& out = lp.element[left + k];
    out.c = e.getC();
    out.d = e.getD();
    out.C = e.getCc();
    out.D = e.getDd();
    out.ex = e.getEx();
    out.ev = e.getEv();
  }
  d.segment = std::make_unique<library::ChainSegment>(lp, left, left + m);
  for (double u : cfg.getInitialInputs()) d.initial_inputs.push_back(u);
  if (d.initial_inputs.size() != d.segment->input_size()) {
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
  d.rollback = cfg.getRollback();
  for (auto c : cfg.getCpuset()) d.cpuset.push_back(c);
  d.extra_runs = cfg.getExtraRuns();
  d.threads = cfg.getThreads();
  return d;
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
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.begin(), bytes.size());
  return out;
}

HandshakeInfo decode_handshake(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0) {
    throw std::runtime_error("handshake: malformed message");
  }
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
}

std::vector<std::byte> encode_shutdown(const std::string& reason) {
  capnp::MallocMessageBuilder message;
  message.initRoot<schema::Shutdown>().setReason(reason.substr(0, 512));
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.begin(), bytes.size());
  return out;
}

std::string decode_shutdown(const std::byte* data, std::size_t bytes) {
  if (bytes == 0 || bytes % sizeof(capnp::word) != 0) return {};
  capnp::FlatArrayMessageReader reader(kj::ArrayPtr<const capnp::word>(
      reinterpret_cast<const capnp::word*>(data), bytes / sizeof(capnp::word)));
  return reader.getRoot<schema::Shutdown>().getReason().cStr();
}

void write_message(ConfigBlock& block, const std::vector<std::byte>& message) {
  if (message.size() > block.capacity) {
    throw std::runtime_error("control message of " + std::to_string(message.size()) +
                             " bytes does not fit its region of " + std::to_string(block.capacity) +
                             " bytes");
  }
  std::memcpy(block.data(), message.data(), message.size());
  block.bytes.store(message.size(), std::memory_order_release);
}

}  // namespace macrostep::worker
