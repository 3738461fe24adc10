// Description of an oscillator chain (spec/MODELS.md §1, seed 000 §2.2-2.3) as a user writes
// it in a configuration: scalar defaults, per-range overrides and random draws. realize()
// turns it into ChainParameters, the fully explicit per-mass / per-element data the model uses.
//
// Random data (MODELS.md §0 [SI]): every random value is drawn from one SplitMix64 stream
// seeded with ChainSpec::seed, in a fixed documented order (see chain_spec.cpp), with
// uniform(a, b) = a + (b - a) * (next() >> 11) * 2^-53. The same spec therefore always gives
// the same model, on every platform and standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"

namespace macrostep::library {

// A scalar that may be fixed, drawn per item, or proportional to the 1-based item index.
struct ValueSpec {
  enum class Kind : std::uint8_t {
    kFixed,          // a
    kUniform,        // uniform in [a, b]
    kSignedUniform,  // magnitude uniform in [a, b], sign +/- with probability 1/2 ("±[a, b]")
    kLinear,         // a * i, i the 1-based mass index (K-5.4a: x_i0 = i * 3e-7 m)
  };
  Kind kind = Kind::kFixed;
  double a = 0.0;
  double b = 0.0;

  static ValueSpec fixed(double v) { return {Kind::kFixed, v, v}; }
  static ValueSpec uniform(double lo, double hi) { return {Kind::kUniform, lo, hi}; }
  static ValueSpec signed_uniform(double lo, double hi) { return {Kind::kSignedUniform, lo, hi}; }
  static ValueSpec linear(double slope) { return {Kind::kLinear, slope, slope}; }
};

// Element coefficients; c may carry the sine modulation of K-5.4a:
//   c_i = c * (1 + amplitude * sin(omega * ((i - 1) mod period))), i the 1-based element index.
struct ElementSpec {
  double c = 0.0, d = 0.0, C = 0.0, D = 0.0;
  double ex = 3.0, ev = 3.0;
  double modulation_amplitude = 0.0;
  double modulation_omega = 0.0;
  std::size_t modulation_period = 1;
};

// An override of mass or element coefficients on an inclusive 1-based index range.
struct MassOverride {
  std::size_t first = 1, last = 1;  // masses first..last
  double mass = 1.0;
};
struct ElementOverride {
  std::size_t first = 1, last = 1;  // elements first..last (element i joins masses i-1 and i)
  std::optional<double> c, d, C, D, ex, ev;
};

// Which masses a force group acts on.
struct MassSelection {
  enum class Kind : std::uint8_t {
    kList,      // explicit 1-based indices
    kFraction,  // round(fraction * n_K) distinct masses drawn without replacement
    kAll,
  };
  Kind kind = Kind::kList;
  std::vector<std::size_t> masses;
  double fraction = 0.0;
};

enum class ForceType : std::uint8_t { kHarmonic, kContact, kImpulse, kModifiedSine };

// One group of external forces of one type. Parameters are drawn per selected mass.
//  harmonic:      amplitude * sin(omega * t + phase)
//  contact:       amplitude * exp(stiffness * x)  (amplitude = A_C < 0, stiffness = B_C > 0);
//                 contact masses start at -|x0| so no body starts inside the wall.
//  impulse:       amplitude * 0.5 * [tanh((t - t_I)/edge) - tanh((t - t_I - duration)/edge)],
//                 one pulse per entry of `times` (t_I), or one at a drawn `time` if empty.
//  modified sine: amplitude * sin(omega * t + phase)^exponent (exponent odd, 95 by default)
// alternate_sign: multiply the k-th selected mass's amplitude (0-based, in chain order) by
// (-1)^k (K-5.8: every coupling element is compressed).
struct ForceGroupSpec {
  ForceType type = ForceType::kHarmonic;
  MassSelection selection;
  ValueSpec amplitude = ValueSpec::fixed(0.0);
  ValueSpec omega = ValueSpec::fixed(0.0);
  ValueSpec phase = ValueSpec::fixed(0.0);
  ValueSpec stiffness = ValueSpec::fixed(0.0);  // contact B_C
  ValueSpec time = ValueSpec::fixed(0.0);       // impulse t_I when `times` is empty
  std::vector<double> times;                    // impulse t_I list (same for every mass)
  double duration = 0.0;                        // impulse Δt_I
  double edge = 1e-6;                           // impulse δ_I
  double exponent = 95.0;                       // modified sine A_S
  bool alternate_sign = false;
};

enum class EndCondition : std::uint8_t { kFixed, kFree };

struct ChainSpec {
  std::size_t masses = 0;  // n_K >= 1
  ValueSpec mass = ValueSpec::fixed(1.0);
  ElementSpec element;
  std::vector<MassOverride> mass_overrides;
  std::vector<ElementOverride> element_overrides;
  EndCondition left = EndCondition::kFixed;
  EndCondition right = EndCondition::kFixed;
  ValueSpec x0 = ValueSpec::fixed(0.0);
  ValueSpec v0 = ValueSpec::fixed(0.0);
  // Explicit per-mass initial values (size masses, chain order). When non-empty they replace
  // x0 / v0, which are then ignored and draw nothing. The contact rule x0 = -|x0| applies to
  // explicit values too.
  std::vector<double> x0_values, v0_values;
  std::vector<ForceGroupSpec> forces;
  std::uint64_t seed = 1;
};

// Builds explicit parameters. Throws std::invalid_argument with a message naming the offending
// field for values no chain can have (n_K < 1, mass <= 0, negative c/d/C/D, index out of range,
// fraction outside [0, 1], exponent < 1, edge <= 0, x0_values / v0_values of a size other than
// masses or with a value that is not finite, ...).
ChainParameters realize(const ChainSpec& spec);

}  // namespace macrostep::library
