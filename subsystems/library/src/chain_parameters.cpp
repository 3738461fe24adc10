// Element law and external forces of the oscillator chain (seed 000 Eq. 2.9-2.14,
// spec/MODELS.md §1.2-1.3). These functions sit on the residual/Jacobian hot path.
#include "macrostep/library/chain_parameters.hpp"

#include <algorithm>
#include <cmath>

namespace macrostep::library {
namespace {

// |a|^k for a small integer k by binary exponentiation: several times faster than std::pow
// for the integer exponents of the studies (e_x = 6, 7; A_S = 95), within a few ulps of it.
inline double int_pow(double a, unsigned k) {
  double r = 1.0;
  while (k != 0) {
    if ((k & 1u) != 0) r *= a;
    a *= a;
    k >>= 1;
  }
  return r;
}

constexpr double kMaxIntExponent = 128.0;

inline bool is_small_integer(double e) {
  return e >= 0.0 && e <= kMaxIntExponent && e == static_cast<double>(static_cast<unsigned>(e));
}

// |a|^e for e >= 0 (std::pow only for non-integer exponents).
inline double abs_pow(double a, double e) {
  const double m = std::fabs(a);
  if (is_small_integer(e)) return int_pow(m, static_cast<unsigned>(e));
  return std::pow(m, e);
}

// sgn(a) * |a|^e for e >= 1; exact cube without std::pow for the default exponent 3.
inline double signed_pow(double a, double e) {
  if (e == 3.0) return a * a * a;
  if (a == 0.0) return 0.0;
  return std::copysign(abs_pow(a, e), a);
}

// e * |a|^(e-1), the derivative of signed_pow (finite at a = 0 for e >= 1).
inline double signed_pow_derivative(double a, double e) {
  if (e == 3.0) return 3.0 * a * a;
  if (e == 1.0) return 1.0;
  return e * abs_pow(a, e - 1.0);
}

// a^e for an integer e >= 1 (the sign of a kept for odd e only); sgn(a)·|a|^e otherwise.
inline double integer_or_signed_pow(double a, double e) {
  const bool even = std::fmod(e, 2.0) == 0.0;
  return even ? abs_pow(a, e) : signed_pow(a, e);
}

constexpr double kContactExponentMax = 700.0;  // exp(700) ~ 1e304: no overflow

}  // namespace

double ElementLaw::force(double dx, double dv) const {
  double f = c * dx + d * dv;
  if (C != 0.0) f += C * signed_pow(dx, ex);
  if (D != 0.0) f += D * signed_pow(dv, ev);
  return f;
}

double ElementLaw::stiffness(double dx) const {
  double k = c;
  if (C != 0.0) k += C * signed_pow_derivative(dx, ex);
  return k;
}

double ElementLaw::damping(double dv) const {
  double k = d;
  if (D != 0.0) k += D * signed_pow_derivative(dv, ev);
  return k;
}

double MassForces::force(double t, double x) const {
  double f = 0.0;
  for (const HarmonicForce& h : harmonic) f += h.amplitude * std::sin(h.omega * t + h.phase);
  for (const ContactForce& k : contact) {
    f += k.amplitude * std::exp(std::min(k.stiffness * x, kContactExponentMax));
  }
  for (const ImpulseForce& p : impulse) {
    const double rise = std::tanh((t - p.start) / p.edge);
    const double fall = std::tanh((t - p.start - p.duration) / p.edge);
    f += p.amplitude * 0.5 * (rise - fall);
  }
  for (const ModifiedSineForce& s : modified_sine) {
    f += s.amplitude * integer_or_signed_pow(std::sin(s.omega * t + s.phase), s.exponent);
  }
  return f;
}

double MassForces::dforce_dx(double /*t*/, double x) const {
  double df = 0.0;
  for (const ContactForce& k : contact) {
    const double e = k.stiffness * x;
    // Above the clamp the force is constant in x, so its derivative is zero.
    if (e < kContactExponentMax) df += k.amplitude * k.stiffness * std::exp(e);
  }
  return df;
}

}  // namespace macrostep::library
