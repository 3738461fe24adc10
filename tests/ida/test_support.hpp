// Shared fixtures for the integrator tests: chain models and polynomial inputs.
#pragma once

#include <cmath>
#include <cstring>
#include <span>
#include <string>
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

// An oscillator driving two first-order lags, block lower-triangular (state order x, v, w, q):
//   x' = v,  v' = u - k x - d v,  w' = x^2 - a w,  q' = w - q.
// KLU's block triangular form gives one 2x2 block and two singleton blocks with entries off
// the diagonal blocks, which the chain (one irreducible block) never has.
class CascadeModel final : public model::Subsystem {
 public:
  CascadeModel() {
    pattern_.n = 4;
    pattern_.column_start = {0, 3, 5, 7, 8};
    pattern_.row_index = {0, 1, 2, 0, 1, 2, 3, 3};
  }
  std::size_t state_size() const override { return 4; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 1; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return "xvwq"[i] + std::string(); }
  std::string output_name(std::size_t) const override { return "x"; }
  std::string input_name(std::size_t) const override { return "u"; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z,
                     std::span<double> zp) const override {
    z[0] = 1e-3;
    z[1] = z[2] = z[3] = 0.0;
    zp[0] = z[1];
    zp[1] = u0[0] - kK * z[0] - kD * z[1];
    zp[2] = z[0] * z[0] - kA * z[2];
    zp[3] = z[2] - z[3];
  }
  void residual(double, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = zp[1] + kK * z[0] + kD * z[1] - u[0];
    r[2] = zp[2] + kA * z[2] - z[0] * z[0];
    r[3] = zp[3] + z[3] - z[2];
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double> z, std::span<const double>, std::span<const double>,
                double cj, std::span<double> v) const override {
    v[0] = cj;  // column x: rows 0, 1, 2
    v[1] = kK;
    v[2] = -2.0 * z[0];
    v[3] = -1.0;  // column v: rows 0, 1
    v[4] = cj + kD;
    v[5] = cj + kA;  // column w: rows 2, 3
    v[6] = -1.0;
    v[7] = cj + 1.0;  // column q: row 3
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
  }

 private:
  static constexpr double kK = 1e4, kD = 10.0, kA = 50.0;
  model::SparsityPattern pattern_;
  std::vector<model::StateRole> roles_ = {model::StateRole::kPosition, model::StateRole::kVelocity,
                                          model::StateRole::kOther, model::StateRole::kOther};
};

inline bool bit_identical(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace macrostep::test
