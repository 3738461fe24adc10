// Cap'n Proto encoding of library::ModelDescription (ipc/schema/control.capnp ModelConfig):
// one pair of functions per model type, dispatched on the description's alternative.
#include "model_config.hpp"

#include <memory>
#include <stdexcept>
#include <string>

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

}  // namespace

void encode_model(const library::ModelDescription& model, schema::ModelConfig::Builder out) {
  if (const auto* chain = std::get_if<library::ChainSegmentDescription>(&model)) {
    encode_chain_segment(*chain, out.initChainSegment());
    return;
  }
  throw std::invalid_argument("encode_config: a model type without an encoding");
}

library::ModelDescription decode_model(schema::ModelConfig::Reader in) {
  switch (in.which()) {
    case schema::ModelConfig::CHAIN_SEGMENT:
      return decode_chain_segment(in.getChainSegment());
    case schema::ModelConfig::NONE:
      throw std::runtime_error("subsystem configuration: no model");
  }
  throw std::runtime_error("subsystem configuration: a model type this worker does not know");
}

}  // namespace macrostep::worker
