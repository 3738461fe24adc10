// Fully explicit parameters of an oscillator chain (spec/MODELS.md §1; seed 000 Eq. 2.9-2.15).
// Indexing here is 0-based: mass k (0..n-1) is the paper's mass k+1; element k (0..n) joins
// mass k-1 and mass k, where mass -1 and mass n are the walls (x = v = 0). A free end is an
// element with all coefficients zero.
#pragma once

#include <cstddef>
#include <vector>

namespace macrostep::library {

// F_SD = c*dx + d*dv + C*sgn(dx)*|dx|^ex + D*sgn(dv)*|dv|^ev  (seed 000 Eq. 2.9)
struct ElementLaw {
  double c = 0.0, d = 0.0, C = 0.0, D = 0.0;
  double ex = 3.0, ev = 3.0;

  double force(double dx, double dv) const;
  // Partial derivatives dF/d(dx), dF/d(dv) (seed 000 Eq. 2.26 with general exponents, D-2).
  double stiffness(double dx) const;
  double damping(double dv) const;
  bool is_zero() const { return c == 0.0 && d == 0.0 && C == 0.0 && D == 0.0; }
};

struct HarmonicForce {
  double amplitude = 0.0, omega = 0.0, phase = 0.0;
};
struct ContactForce {
  double amplitude = 0.0;  // A_C (< 0 in every study)
  double stiffness = 0.0;  // B_C [1/m]
};
struct ImpulseForce {
  double amplitude = 0.0, start = 0.0, duration = 0.0, edge = 1e-6;
};
// amplitude·sin(omega·t + phase)^exponent: for an integer exponent the power itself (an odd one
// keeps the sign of the sine, an even one gives a force of the amplitude's sign only); for a
// non-integer one, which only this interface takes (the configuration refuses it),
// sgn(sin)·|sin|^exponent.
struct ModifiedSineForce {
  double amplitude = 0.0, omega = 0.0, phase = 0.0, exponent = 95.0;
};

// External forces acting on one mass; any combination (seed 000 Eq. 2.11-2.14).
struct MassForces {
  std::vector<HarmonicForce> harmonic;
  std::vector<ContactForce> contact;
  std::vector<ImpulseForce> impulse;
  std::vector<ModifiedSineForce> modified_sine;

  bool empty() const {
    return harmonic.empty() && contact.empty() && impulse.empty() && modified_sine.empty();
  }
  // Total force at time t on a body at position x, and its derivative with respect to x
  // (only contact forces depend on x). The contact exponent is clamped at 700 (MODELS.md §1.3).
  double force(double t, double x) const;
  double dforce_dx(double t, double x) const;
};

struct ChainParameters {
  std::vector<double> mass;         // size n
  std::vector<ElementLaw> element;  // size n + 1
  std::vector<MassForces> forces;   // size n
  std::vector<double> x0, v0;       // size n
  std::size_t size() const { return mass.size(); }
};

}  // namespace macrostep::library
