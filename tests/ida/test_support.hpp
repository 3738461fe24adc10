// Shared fixtures for the integrator tests: chain models and polynomial inputs.
#pragma once

#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::test {

// u_i(t) = a_i + b_i (t - t0) + c_i (t - t0)^2: a stand-in for a support-point polynomial.
class QuadraticInput final : public model::InputFunction {
 public:
  QuadraticInput(std::size_t n, double t0, double scale) : t0_(t0), a_(n), b_(n), c_(n) {
    for (std::size_t i = 0; i < n; ++i) {
      a_[i] = scale * (1.0 + 0.3 * static_cast<double>(i));
      b_[i] = scale * 50.0 * (i % 2 == 0 ? 1.0 : -1.0);
      c_[i] = scale * 1e3;
    }
  }
  void evaluate(double t, std::span<double> u) const override {
    const double s = t - t0_;
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = a_[i] + s * (b_[i] + s * c_[i]);
  }

 private:
  double t0_;
  std::vector<double> a_, b_, c_;
};

// A nonlinear 30-mass chain with every force type (K-5.3-like scales, seeded).
inline library::ChainParameters nonlinear_chain(std::size_t masses = 30) {
  library::ChainSpec spec;
  spec.masses = masses;
  spec.mass = library::ValueSpec::uniform(0.04, 0.06);
  spec.element.c = 2.5e6;
  spec.element.d = 25.0;
  spec.element.C = 1e10;
  spec.element.D = 1e-4;
  spec.x0 = library::ValueSpec::uniform(-1e-4, 1e-4);
  spec.v0 = library::ValueSpec::uniform(-1.0, 1.0);
  spec.seed = 7;
  library::ForceGroupSpec sine;
  sine.type = library::ForceType::kModifiedSine;
  sine.selection.kind = library::MassSelection::Kind::kFraction;
  sine.selection.fraction = 0.3;
  sine.amplitude = library::ValueSpec::signed_uniform(1e3, 1e4);
  sine.omega = library::ValueSpec::uniform(500.0, 5000.0);
  spec.forces.push_back(sine);
  library::ForceGroupSpec harmonic;
  harmonic.type = library::ForceType::kHarmonic;
  harmonic.selection.masses = {3, 17};
  harmonic.amplitude = library::ValueSpec::fixed(50.0);
  harmonic.omega = library::ValueSpec::fixed(2000.0);
  spec.forces.push_back(harmonic);
  library::ForceGroupSpec impulse;
  impulse.type = library::ForceType::kImpulse;
  impulse.selection.masses = {12};
  impulse.amplitude = library::ValueSpec::fixed(1e3);
  impulse.times = {2e-4};
  impulse.duration = 1e-4;
  impulse.edge = 1e-6;
  spec.forces.push_back(impulse);
  library::ForceGroupSpec contact;
  contact.type = library::ForceType::kContact;
  contact.selection.masses = {25};
  contact.amplitude = library::ValueSpec::fixed(-1e-2);
  contact.stiffness = library::ValueSpec::fixed(1e5);
  spec.forces.push_back(contact);
  return library::realize(spec);
}

inline bool bit_identical(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace macrostep::test
