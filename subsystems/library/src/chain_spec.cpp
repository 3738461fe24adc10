// realize(): from the user-level chain description to explicit parameters (spec/MODELS.md §0,
// §1; seed 000 §2.2-2.3).
//
// Random stream (MODELS.md §0 [SI]). One SplitMix64 generator, state initialised to
// ChainSpec::seed; next() does
//   state += 0x9e3779b97f4a7c15; z = state;
//   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9; z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
//   return z ^ (z >> 31);
// and uniform(a, b) = a + (b - a) * ((next() >> 11) * 2^-53).
// A ValueSpec for the item with 1-based mass index i takes
//   fixed:          no draw, value a
//   uniform:        one draw, uniform(a, b)
//   signed_uniform: two draws, magnitude = uniform(a, b), then sign = next() >> 63
//                   (1 -> negative, 0 -> positive)
//   linear:         no draw, value a * i
// An integer index in [0, r) is index(r) = min(r - 1, floor(uniform(0, 1) * r)) (one draw).
//
// Draw order (nothing else draws; fixed values and validation never touch the stream):
//   1. spec.mass for masses i = 1..n in index order (then mass overrides, no draws);
//      elements have no random data (modulation, overrides and free ends draw nothing);
//   2. spec.x0 for masses i = 1..n, then spec.v0 for masses i = 1..n (x0_values / v0_values,
//      when given, replace them and draw nothing);
//   3. for each force group in spec.forces order:
//      a. selection: list and all draw nothing; fraction p picks count = round(p * n) masses
//         (std::round, half away from zero) by a partial Fisher-Yates shuffle of the 0-based
//         indices a = [0, 1, ..., n-1]: for j = 0..count-1: r = j + index(n - j),
//         swap(a[j], a[r]); the selection is a[0..count) sorted into chain order;
//      b. for each selected mass in chain order (k = 0, 1, ... its position), its parameters:
//           harmonic:      amplitude, omega, phase
//           contact:       amplitude, stiffness
//           impulse:       amplitude, then time (only if `times` is empty)
//           modified sine: amplitude, omega, phase
//         alternate_sign multiplies the k-th amplitude by (-1)^k after the draw.
// Finally every mass with a contact force gets x0 = -|x0| (no draw).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "macrostep/library/chain_spec.hpp"

namespace macrostep::library {
namespace {

class Stream {
 public:
  explicit Stream(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform(double a, double b) {
    return a + (b - a) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }
  std::size_t index(std::size_t r) {
    const auto i = static_cast<std::size_t>(std::floor(uniform(0.0, 1.0) * static_cast<double>(r)));
    return std::min(r - 1, i);
  }

 private:
  std::uint64_t state_;
};

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void fail(const std::string& message) {
  throw std::invalid_argument(message);
}

// Explicit per-mass values: empty, or one finite number per mass.
void check_explicit_values(const std::vector<double>& values, const std::string& field,
                           std::size_t masses) {
  if (values.empty()) return;
  if (values.size() != masses) {
    fail(field + " must have one entry per mass: masses = " + std::to_string(masses) + " (got " +
         std::to_string(values.size()) + " entries)");
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      fail(field + "[" + std::to_string(i + 1) + "] must be finite (got " + num(values[i]) + ")");
    }
  }
}

// Structural validity of a ValueSpec (NaN fails every comparison and is rejected).
void check_value(const ValueSpec& v, const std::string& field) {
  switch (v.kind) {
    case ValueSpec::Kind::kFixed:
    case ValueSpec::Kind::kLinear:
      if (!std::isfinite(v.a)) fail(field + " must be finite (got " + num(v.a) + ")");
      break;
    case ValueSpec::Kind::kUniform:
      if (!std::isfinite(v.a) || !std::isfinite(v.b) || !(v.a <= v.b)) {
        fail(field + ": uniform range needs finite a <= b (got [" + num(v.a) + ", " + num(v.b) +
             "])");
      }
      break;
    case ValueSpec::Kind::kSignedUniform:
      if (!std::isfinite(v.b) || !(0.0 <= v.a && v.a <= v.b)) {
        fail(field + ": signed_uniform range needs 0 <= a <= b (got +/-[" + num(v.a) + ", " +
             num(v.b) + "])");
      }
      break;
  }
}

// A ValueSpec whose every possible value is > 0 (masses).
void check_positive(const ValueSpec& v, const std::string& field) {
  check_value(v, field);
  const bool ok = v.kind != ValueSpec::Kind::kSignedUniform && v.a > 0.0;
  if (!ok) fail(field + " must be > 0 (got " + num(v.a) + ")");
}

double draw(const ValueSpec& v, std::size_t index1, Stream& s) {
  switch (v.kind) {
    case ValueSpec::Kind::kFixed:
      return v.a;
    case ValueSpec::Kind::kUniform:
      return s.uniform(v.a, v.b);
    case ValueSpec::Kind::kSignedUniform: {
      const double magnitude = s.uniform(v.a, v.b);
      return (s.next() >> 63) != 0 ? -magnitude : magnitude;
    }
    case ValueSpec::Kind::kLinear:
      return v.a * static_cast<double>(index1);
  }
  return v.a;
}

void check_coefficient(double v, const std::string& field) {
  if (!(v >= 0.0) || !std::isfinite(v)) fail(field + " must be >= 0 (got " + num(v) + ")");
}
void check_exponent(double v, const std::string& field) {
  if (!(v >= 1.0) || !std::isfinite(v)) fail(field + " must be >= 1 (got " + num(v) + ")");
}

const char* type_name(ForceType t) {
  switch (t) {
    case ForceType::kHarmonic:
      return "harmonic";
    case ForceType::kContact:
      return "contact";
    case ForceType::kImpulse:
      return "impulse";
    case ForceType::kModifiedSine:
      return "modified_sine";
  }
  return "?";
}

void check_force_group(const ForceGroupSpec& g, const std::string& name, std::size_t n) {
  const MassSelection& sel = g.selection;
  switch (sel.kind) {
    case MassSelection::Kind::kList: {
      std::vector<bool> seen(n + 1, false);
      for (std::size_t j = 0; j < sel.masses.size(); ++j) {
        const std::size_t i = sel.masses[j];
        const std::string item =
            name + ": selection.masses[" + std::to_string(j) + "] = " + std::to_string(i);
        if (i < 1 || i > n) fail(item + " is out of range 1.." + std::to_string(n));
        if (seen[i]) fail(item + " is duplicated");
        seen[i] = true;
      }
      break;
    }
    case MassSelection::Kind::kFraction:
      if (!(sel.fraction >= 0.0 && sel.fraction <= 1.0)) {
        fail(name + ": selection.fraction must be in [0, 1] (got " + num(sel.fraction) + ")");
      }
      break;
    case MassSelection::Kind::kAll:
      break;
  }
  check_value(g.amplitude, name + ": amplitude");
  switch (g.type) {
    case ForceType::kHarmonic:
      check_value(g.omega, name + ": omega");
      check_value(g.phase, name + ": phase");
      break;
    case ForceType::kContact:
      check_value(g.stiffness, name + ": stiffness");
      break;
    case ForceType::kImpulse:
      if (g.times.empty()) check_value(g.time, name + ": time");
      for (std::size_t j = 0; j < g.times.size(); ++j) {
        if (!std::isfinite(g.times[j])) {
          fail(name + ": times[" + std::to_string(j) + "] must be finite");
        }
      }
      if (!(g.duration >= 0.0) || !std::isfinite(g.duration)) {
        fail(name + ": duration must be >= 0 (got " + num(g.duration) + ")");
      }
      if (!(g.edge > 0.0) || !std::isfinite(g.edge)) {
        fail(name + ": edge must be > 0 (got " + num(g.edge) + ")");
      }
      break;
    case ForceType::kModifiedSine:
      check_value(g.omega, name + ": omega");
      check_value(g.phase, name + ": phase");
      check_exponent(g.exponent, name + ": exponent");
      break;
  }
}

// 0-based selected masses in chain order; draws only for fractions (see the top comment).
std::vector<std::size_t> select_masses(const MassSelection& sel, std::size_t n, Stream& s) {
  std::vector<std::size_t> out;
  switch (sel.kind) {
    case MassSelection::Kind::kList:
      out.reserve(sel.masses.size());
      for (std::size_t i : sel.masses) out.push_back(i - 1);
      break;
    case MassSelection::Kind::kAll:
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = i;
      break;
    case MassSelection::Kind::kFraction: {
      const auto count =
          static_cast<std::size_t>(std::round(sel.fraction * static_cast<double>(n)));
      // Partial Fisher-Yates on the virtual array a[i] = i; only swapped slots are stored, so
      // memory is O(count) even for n = 1e7.
      std::unordered_map<std::size_t, std::size_t> moved;
      auto at = [&moved](std::size_t i) {
        const auto it = moved.find(i);
        return it == moved.end() ? i : it->second;
      };
      out.reserve(count);
      for (std::size_t j = 0; j < count; ++j) {
        const std::size_t r = j + s.index(n - j);
        const std::size_t aj = at(j), ar = at(r);
        moved[r] = aj;
        moved[j] = ar;
        out.push_back(ar);
      }
      break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

namespace {

// Every check of realize() that needs no draw: nothing is drawn for a spec that fails.
void validate(const ChainSpec& spec) {
  const std::size_t n = spec.masses;
  if (n < 1) fail("chain.masses must be >= 1 (got " + std::to_string(n) + ")");

  check_positive(spec.mass, "chain.mass");
  for (std::size_t j = 0; j < spec.mass_overrides.size(); ++j) {
    const MassOverride& o = spec.mass_overrides[j];
    const std::string name = "mass override " + std::to_string(j + 1);
    if (o.first < 1) fail(name + ": first (" + std::to_string(o.first) + ") must be >= 1");
    if (o.last > n) {
      fail(name + ": last (" + std::to_string(o.last) + ") exceeds masses (" + std::to_string(n) +
           ")");
    }
    if (o.first > o.last) {
      fail(name + ": first (" + std::to_string(o.first) + ") exceeds last (" +
           std::to_string(o.last) + ")");
    }
    if (!(o.mass > 0.0) || !std::isfinite(o.mass)) {
      fail(name + ": mass must be > 0 (got " + num(o.mass) + ")");
    }
  }
  const ElementSpec& es = spec.element;
  check_coefficient(es.c, "chain.element.c");
  check_coefficient(es.d, "chain.element.d");
  check_coefficient(es.C, "chain.element.C");
  check_coefficient(es.D, "chain.element.D");
  check_exponent(es.ex, "chain.element.ex");
  check_exponent(es.ev, "chain.element.ev");
  if (es.modulation_period < 1) fail("chain.element.modulation_period must be >= 1");
  if (!std::isfinite(es.modulation_amplitude) || !std::isfinite(es.modulation_omega)) {
    fail("chain.element.modulation_amplitude and modulation_omega must be finite");
  }
  const std::size_t n_elements = n + 1;
  for (std::size_t j = 0; j < spec.element_overrides.size(); ++j) {
    const ElementOverride& o = spec.element_overrides[j];
    const std::string name = "element override " + std::to_string(j + 1);
    if (o.first < 1) fail(name + ": first (" + std::to_string(o.first) + ") must be >= 1");
    if (o.last > n_elements) {
      fail(name + ": last (" + std::to_string(o.last) + ") exceeds elements (" +
           std::to_string(n_elements) + ")");
    }
    if (o.first > o.last) {
      fail(name + ": first (" + std::to_string(o.first) + ") exceeds last (" +
           std::to_string(o.last) + ")");
    }
    if (o.c) check_coefficient(*o.c, name + ": c");
    if (o.d) check_coefficient(*o.d, name + ": d");
    if (o.C) check_coefficient(*o.C, name + ": C");
    if (o.D) check_coefficient(*o.D, name + ": D");
    if (o.ex) check_exponent(*o.ex, name + ": ex");
    if (o.ev) check_exponent(*o.ev, name + ": ev");
  }
  check_value(spec.x0, "chain.x0");
  check_value(spec.v0, "chain.v0");
  check_explicit_values(spec.x0_values, "chain.x0_values", n);
  check_explicit_values(spec.v0_values, "chain.v0_values", n);
  for (std::size_t j = 0; j < spec.forces.size(); ++j) {
    const ForceGroupSpec& g = spec.forces[j];
    check_force_group(g, "force group " + std::to_string(j + 1) + " (" + type_name(g.type) + ")",
                      n);
  }
}

// The n + 1 element laws: the spec's law, its modulation (K-5.4a), the overrides, free ends.
std::vector<ElementLaw> element_laws(const ChainSpec& spec) {
  const ElementSpec& es = spec.element;
  std::vector<ElementLaw> element;
  const std::size_t n_elements = spec.masses + 1;
  element.resize(n_elements);
  for (std::size_t i = 1; i <= n_elements; ++i) {
    ElementLaw& e = element[i - 1];
    e.c = es.c;
    e.d = es.d;
    e.C = es.C;
    e.D = es.D;
    e.ex = es.ex;
    e.ev = es.ev;
    if (es.modulation_amplitude != 0.0) {
      const double phase =
          es.modulation_omega * static_cast<double>((i - 1) % es.modulation_period);
      e.c = es.c * (1.0 + es.modulation_amplitude * std::sin(phase));
      if (!(e.c >= 0.0)) {
        fail("chain.element.modulation_amplitude gives c < 0 at element " + std::to_string(i) +
             " (c = " + num(e.c) + ")");
      }
    }
  }
  for (const ElementOverride& o : spec.element_overrides) {
    for (std::size_t i = o.first; i <= o.last; ++i) {
      ElementLaw& e = element[i - 1];
      if (o.c) e.c = *o.c;
      if (o.d) e.d = *o.d;
      if (o.C) e.C = *o.C;
      if (o.D) e.D = *o.D;
      if (o.ex) e.ex = *o.ex;
      if (o.ev) e.ev = *o.ev;
    }
  }
  auto make_free = [](ElementLaw& e) { e.c = e.d = e.C = e.D = 0.0; };
  if (spec.left == EndCondition::kFree) make_free(element.front());
  if (spec.right == EndCondition::kFree) make_free(element.back());
  return element;
}

// Step 3 of the draw order: every force group's masses and parameters.
void draw_forces(const ChainSpec& spec, Stream& s, ChainParameters& p) {
  const std::size_t n = spec.masses;
  p.forces.resize(n);
  for (const ForceGroupSpec& g : spec.forces) {
    const std::vector<std::size_t> selected = select_masses(g.selection, n, s);
    for (std::size_t k = 0; k < selected.size(); ++k) {
      const std::size_t i = selected[k];  // 0-based
      const std::size_t i1 = i + 1;
      MassForces& f = p.forces[i];
      double amplitude = draw(g.amplitude, i1, s);
      if (g.alternate_sign && k % 2 == 1) amplitude = -amplitude;
      switch (g.type) {
        case ForceType::kHarmonic: {
          const double omega = draw(g.omega, i1, s);
          const double phase = draw(g.phase, i1, s);
          f.harmonic.push_back({amplitude, omega, phase});
          break;
        }
        case ForceType::kContact: {
          const double stiffness = draw(g.stiffness, i1, s);
          f.contact.push_back({amplitude, stiffness});
          break;
        }
        case ForceType::kImpulse:
          if (g.times.empty()) {
            f.impulse.push_back({amplitude, draw(g.time, i1, s), g.duration, g.edge});
          } else {
            for (double t : g.times) f.impulse.push_back({amplitude, t, g.duration, g.edge});
          }
          break;
        case ForceType::kModifiedSine: {
          const double omega = draw(g.omega, i1, s);
          const double phase = draw(g.phase, i1, s);
          f.modified_sine.push_back({amplitude, omega, phase, g.exponent});
          break;
        }
      }
    }
  }
}

}  // namespace

ChainParameters realize(const ChainSpec& spec) {
  validate(spec);
  const std::size_t n = spec.masses;
  ChainParameters p;
  Stream s(spec.seed);

  // ---- 1. masses ----
  p.mass.resize(n);
  for (std::size_t i = 0; i < n; ++i) p.mass[i] = draw(spec.mass, i + 1, s);
  for (const MassOverride& o : spec.mass_overrides) {
    for (std::size_t i = o.first; i <= o.last; ++i) p.mass[i - 1] = o.mass;
  }

  p.element = element_laws(spec);

  // ---- 2. initial conditions ----
  p.x0.resize(n);
  p.v0.resize(n);
  if (!spec.x0_values.empty()) {
    p.x0 = spec.x0_values;
  } else {
    for (std::size_t i = 0; i < n; ++i) p.x0[i] = draw(spec.x0, i + 1, s);
  }
  if (!spec.v0_values.empty()) {
    p.v0 = spec.v0_values;
  } else {
    for (std::size_t i = 0; i < n; ++i) p.v0[i] = draw(spec.v0, i + 1, s);
  }

  draw_forces(spec, s, p);

  // Contact bodies start outside the wall (MODELS.md §1.3 [SI]).
  for (std::size_t i = 0; i < n; ++i) {
    if (!p.forces[i].contact.empty()) p.x0[i] = -std::fabs(p.x0[i]);
  }
  return p;
}

}  // namespace macrostep::library
