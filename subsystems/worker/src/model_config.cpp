// Cap'n Proto encoding of library::ModelDescription (ipc/schema/control.capnp ModelConfig): the
// registry's models through one generic encoding of (name, values), the others one pair of
// functions per model type, dispatched on the description's alternative. Doubles are
// copied as they are (Float64 bit patterns), so the worker's model is bit-identical (contract 1).
#include "model_config.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace macrostep::worker {

namespace {

// Only the segment's own masses and the elements at its ends travel: a chain of 10^5 masses cut
// in 100 pieces sends each worker a hundredth of it.
void encode_chain_segment(const library::ChainSegmentDescription& d,
                          schema::ChainSegmentConfig::Builder chain) {
  if (!d.chain || !(d.first < d.last && d.last <= d.chain->size())) {
    throw std::invalid_argument("encode_config: no chain or bad mass range");
  }
  const auto& p = *d.chain;
  const auto m = static_cast<unsigned>(d.last - d.first);
  chain.setChainSize(p.size());
  chain.setFirstMass(d.first);
  chain.setLastMass(d.last);
  auto mass = chain.initMass(m);
  auto x0 = chain.initX0(m);
  auto v0 = chain.initV0(m);
  auto forces = chain.initForces(m);
  for (unsigned k = 0; k < m; ++k) {
    const std::size_t g = d.first + k;
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
    const auto& e = p.element[d.first + k];
    element[k].setC(e.c);
    element[k].setD(e.d);
    element[k].setCc(e.C);
    element[k].setDd(e.D);
    element[k].setEx(e.ex);
    element[k].setEv(e.ev);
  }
}

// The worker's segment lives in a local chain that has a padding mass where the segment has a cut
// neighbour, so that segment [left, left + m) of it has the same inputs and equations as the
// original segment.
library::ModelDescription decode_chain_segment(schema::ChainSegmentConfig::Reader chain) {
  const std::size_t n = chain.getChainSize();
  const std::size_t first = chain.getFirstMass();
  const std::size_t last = chain.getLastMass();
  if (!(first < last && last <= n)) {
    throw std::runtime_error("chain segment configuration: bad mass range");
  }
  const std::size_t m = last - first;
  // Each list is fetched once: every get of a list pointer counts towards the traversal limit.
  const auto mass = chain.getMass();
  const auto x0 = chain.getX0();
  const auto v0 = chain.getV0();
  const auto forces = chain.getForces();
  const auto elements = chain.getElement();
  if (mass.size() != m || x0.size() != m || v0.size() != m || forces.size() != m ||
      elements.size() != m + 1) {
    throw std::runtime_error("chain segment configuration: parameter lists of the wrong size");
  }
  // A local chain that has a padding mass where the segment has a cut neighbour, so that the
  // segment [left, left + m) of it has the same inputs and equations as the original segment.
  const std::size_t left = first > 0 ? 1 : 0;
  const std::size_t right = last < n ? 1 : 0;
  const std::size_t nl = m + left + right;
  auto lp = std::make_shared<library::ChainParameters>();
  lp->mass.assign(nl, 1.0);
  lp->element.assign(nl + 1, library::ElementLaw{});
  lp->forces.assign(nl, library::MassForces{});
  lp->x0.assign(nl, 0.0);
  lp->v0.assign(nl, 0.0);
  for (unsigned k = 0; k < m; ++k) {
    lp->mass[left + k] = mass[k];
    lp->x0[left + k] = x0[k];
    lp->v0[left + k] = v0[k];
    const auto f = forces[k];
    auto& out = lp->forces[left + k];
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
    auto& out = lp->element[left + k];
    out.c = e.getC();
    out.d = e.getD();
    out.C = e.getCc();
    out.D = e.getDd();
    out.ex = e.getEx();
    out.ev = e.getEv();
  }
  return library::ChainSegmentDescription{std::move(lp), left, left + m};
}

template <class List>
std::vector<double> to_vector(List list) {
  std::vector<double> out;
  out.reserve(list.size());
  for (double v : list) out.push_back(v);
  return out;
}

template <class Builder>
void set_list(Builder builder, const std::vector<double>& values) {
  for (unsigned k = 0; k < values.size(); ++k) builder.set(k, values[k]);
}

void encode_element(const library::ElementLaw& e, schema::ElementLaw::Builder out) {
  out.setC(e.c);
  out.setD(e.d);
  out.setCc(e.C);
  out.setDd(e.D);
  out.setEx(e.ex);
  out.setEv(e.ev);
}

void encode_drive_train(const library::DriveTrainParameters& p,
                        schema::DriveTrainConfig::Builder out) {
  const auto size = [](const auto& v) { return static_cast<unsigned>(v.size()); };
  set_list(out.initInertia(size(p.inertia)), p.inertia);
  auto shaft = out.initShaft(size(p.shaft));
  for (unsigned k = 0; k < p.shaft.size(); ++k) encode_element(p.shaft[k], shaft[k]);
  set_list(out.initBearingDamping(size(p.bearing_damping)), p.bearing_damping);
  auto load = out.initLoad(size(p.load));
  for (unsigned k = 0; k < p.load.size(); ++k) {
    load[k].setConstant(p.load[k].constant);
    load[k].setStep(p.load[k].step);
    load[k].setStepTime(p.load[k].step_time);
    load[k].setStepWidth(p.load[k].step_width);
  }
  set_list(out.initAngle0(size(p.angle0)), p.angle0);
  set_list(out.initSpeed0(size(p.speed0)), p.speed0);
  out.setLeftCoupled(p.left_coupled);
  out.setRightCoupled(p.right_coupled);
}

library::DriveTrainParameters decode_drive_train(schema::DriveTrainConfig::Reader in) {
  library::DriveTrainParameters p;
  p.inertia = to_vector(in.getInertia());
  for (auto e : in.getShaft()) {
    p.shaft.push_back({e.getC(), e.getD(), e.getCc(), e.getDd(), e.getEx(), e.getEv()});
  }
  p.bearing_damping = to_vector(in.getBearingDamping());
  for (auto l : in.getLoad()) {
    p.load.push_back({l.getConstant(), l.getStep(), l.getStepTime(), l.getStepWidth()});
  }
  p.angle0 = to_vector(in.getAngle0());
  p.speed0 = to_vector(in.getSpeed0());
  p.left_coupled = in.getLeftCoupled();
  p.right_coupled = in.getRightCoupled();
  return p;
}

void encode_registered(const library::RegisteredModel& m,
                       schema::RegisteredModelConfig::Builder out) {
  out.setModel(m.model);
  const auto& entries = m.values.entries();
  auto values = out.initValues(static_cast<unsigned>(entries.size()));
  for (unsigned k = 0; k < entries.size(); ++k) {
    auto v = values[k];
    v.setName(entries[k].first);
    std::visit(
        [&v](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, double>) {
            v.setNumber(value);
          } else if constexpr (std::is_same_v<T, std::int64_t>) {
            v.setInteger(value);
          } else if constexpr (std::is_same_v<T, bool>) {
            v.setBoolean(value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            v.setText(value);
          } else {
            set_list(v.initNumbers(static_cast<unsigned>(value.size())), value);
          }
        },
        entries[k].second);
  }
}

// The type a value of `spec` must have.
bool has_type(const library::ParameterValue& v, library::ParameterType type) {
  switch (type) {
    case library::ParameterType::kNumber:
      return std::holds_alternative<double>(v);
    case library::ParameterType::kInteger:
      return std::holds_alternative<std::int64_t>(v);
    case library::ParameterType::kBool:
      return std::holds_alternative<bool>(v);
    case library::ParameterType::kString:
      return std::holds_alternative<std::string>(v);
    case library::ParameterType::kNumberList:
      return std::holds_alternative<std::vector<double>>(v);
  }
  return false;
}

// A model of this worker's registry with a value of the right type for every parameter.
library::RegisteredModel decode_registered(schema::RegisteredModelConfig::Reader in) {
  library::RegisteredModel m{in.getModel(), {}};
  const library::ModelEntry* entry = library::find_model(m.model);
  if (entry == nullptr) {
    throw std::runtime_error("subsystem configuration: a model this worker does not know: \"" +
                             m.model + "\"");
  }
  for (const auto v : in.getValues()) {
    std::string name = v.getName();
    switch (v.which()) {
      case schema::ParameterValue::NUMBER:
        m.values.set(std::move(name), v.getNumber());
        break;
      case schema::ParameterValue::INTEGER:
        m.values.set(std::move(name), static_cast<std::int64_t>(v.getInteger()));
        break;
      case schema::ParameterValue::BOOLEAN:
        m.values.set(std::move(name), v.getBoolean());
        break;
      case schema::ParameterValue::TEXT:
        m.values.set(std::move(name), std::string(v.getText()));
        break;
      case schema::ParameterValue::NUMBERS:
        m.values.set(std::move(name), to_vector(v.getNumbers()));
        break;
    }
  }
  for (const auto& spec : entry->parameters) {
    const library::ParameterValue* v = m.values.find(spec.name);
    if (v == nullptr || !has_type(*v, spec.type)) {
      throw std::runtime_error("subsystem configuration: model " + m.model + " without a valid " +
                               spec.name);
    }
  }
  return m;
}

}  // namespace

void encode_model(const library::ModelDescription& model, schema::ModelConfig::Builder out) {
  if (const auto* chain = std::get_if<library::ChainSegmentDescription>(&model)) {
    encode_chain_segment(*chain, out.initChainSegment());
    return;
  }
  if (const auto* drive = std::get_if<library::DriveTrainParameters>(&model)) {
    encode_drive_train(*drive, out.initDriveTrain());
    return;
  }
  if (const auto* registered = std::get_if<library::RegisteredModel>(&model)) {
    encode_registered(*registered, out.initRegistered());
    return;
  }
  if (const auto* plugin = std::get_if<plugin::PluginDescription>(&model)) {
    auto p = out.initPlugin();
    p.setLibrary(plugin->library);
    p.setParameters(plugin->parameters);
    p.setCheckJacobians(plugin->check_jacobians);
    return;
  }
  if (const auto* fmu = std::get_if<fmu::FmuDescription>(&model)) {
    auto f = out.initFmu();
    f.setPath(fmu->path);
    f.setParameters(fmu->parameters);
    auto inputs = f.initInputs(static_cast<unsigned>(fmu->inputs.size()));
    for (unsigned i = 0; i < inputs.size(); ++i) inputs.set(i, fmu->inputs[i]);
    auto outputs = f.initOutputs(static_cast<unsigned>(fmu->outputs.size()));
    for (unsigned i = 0; i < outputs.size(); ++i) outputs.set(i, fmu->outputs[i]);
    f.setInterface(fmu->interface);
    f.setInputsListed(fmu->inputs_listed);
    return;
  }
  throw std::invalid_argument("encode_config: a model type without an encoding");
}

library::ModelDescription decode_model(schema::ModelConfig::Reader in) {
  switch (in.which()) {
    case schema::ModelConfig::CHAIN_SEGMENT:
      return decode_chain_segment(in.getChainSegment());
    case schema::ModelConfig::DRIVE_TRAIN:
      return decode_drive_train(in.getDriveTrain());
    case schema::ModelConfig::REGISTERED:
      return decode_registered(in.getRegistered());
    case schema::ModelConfig::PLUGIN: {
      const auto p = in.getPlugin();
      return plugin::PluginDescription{p.getLibrary(), p.getParameters(), p.getCheckJacobians()};
    }
    case schema::ModelConfig::FMU: {
      const auto f = in.getFmu();
      fmu::FmuDescription d{f.getPath(), f.getParameters(), {}, {}, f.getInterface()};
      for (const auto name : f.getInputs()) d.inputs.emplace_back(name);
      for (const auto name : f.getOutputs()) d.outputs.emplace_back(name);
      d.interface = f.getInterface();
      d.inputs_listed = f.getInputsListed();
      return d;
    }
    case schema::ModelConfig::NONE:
      throw std::runtime_error("subsystem configuration: no model");
  }
  throw std::runtime_error("subsystem configuration: a model type this worker does not know");
}

}  // namespace macrostep::worker
