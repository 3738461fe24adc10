// realize(): chain description -> explicit parameters (spec/MODELS.md §0 [SI] random data,
// §1; seed 000 §2.2, Tables 5.1-5.9).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/library/chain_spec.hpp"

namespace {

using macrostep::library::ChainParameters;
using macrostep::library::ChainSpec;
using macrostep::library::ElementOverride;
using macrostep::library::EndCondition;
using macrostep::library::ForceGroupSpec;
using macrostep::library::ForceType;
using macrostep::library::MassOverride;
using macrostep::library::MassSelection;
using macrostep::library::realize;
using macrostep::library::ValueSpec;

// Independent re-implementation of the documented stream (chain_spec.cpp top comment).
class RefStream {
 public:
  explicit RefStream(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    s_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform(double a, double b) {
    return a + (b - a) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }

 private:
  std::uint64_t s_;
};

// K-5.3-like chain: random masses? no; random initial conditions, modified sine on 50 %.
ChainSpec random_spec(std::uint64_t seed) {
  ChainSpec s;
  s.masses = 40;
  s.mass = ValueSpec::uniform(1.0, 2.0);
  s.element = {2.5e6, 2.5e1, 1.0e10, 1.0e-4, 3.0, 3.0, 0.0, 0.0, 1};
  s.x0 = ValueSpec::uniform(-1e-4, 1e-4);
  s.v0 = ValueSpec::uniform(-1e-2, 1e-2);
  ForceGroupSpec g;
  g.type = ForceType::kModifiedSine;
  g.selection.kind = MassSelection::Kind::kFraction;
  g.selection.fraction = 0.5;
  g.amplitude = ValueSpec::signed_uniform(1.0e6, 1.0e7);
  g.omega = ValueSpec::uniform(5.0e2, 5.0e3);
  s.forces.push_back(g);
  s.seed = seed;
  return s;
}

void expect_identical(const ChainParameters& a, const ChainParameters& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.mass, b.mass);
  EXPECT_EQ(a.x0, b.x0);
  EXPECT_EQ(a.v0, b.v0);
  ASSERT_EQ(a.element.size(), b.element.size());
  for (std::size_t i = 0; i < a.element.size(); ++i) {
    EXPECT_EQ(a.element[i].c, b.element[i].c);
    EXPECT_EQ(a.element[i].d, b.element[i].d);
    EXPECT_EQ(a.element[i].C, b.element[i].C);
    EXPECT_EQ(a.element[i].D, b.element[i].D);
    EXPECT_EQ(a.element[i].ex, b.element[i].ex);
    EXPECT_EQ(a.element[i].ev, b.element[i].ev);
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& fa = a.forces[i].modified_sine;
    const auto& fb = b.forces[i].modified_sine;
    ASSERT_EQ(fa.size(), fb.size());
    for (std::size_t k = 0; k < fa.size(); ++k) {
      EXPECT_EQ(fa[k].amplitude, fb[k].amplitude);
      EXPECT_EQ(fa[k].omega, fb[k].omega);
      EXPECT_EQ(fa[k].phase, fb[k].phase);
      EXPECT_EQ(fa[k].exponent, fb[k].exponent);
    }
  }
}

std::vector<std::size_t> forced_masses(const ChainParameters& p) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (!p.forces[i].empty()) out.push_back(i);
  }
  return out;
}

// MODELS.md §0 [SI]: the same seed gives the same model, a different seed a different one.
TEST(Realize, SameSeedSameModelDifferentSeedDifferentModel) {
  const ChainParameters a = realize(random_spec(42));
  const ChainParameters b = realize(random_spec(42));
  expect_identical(a, b);
  const ChainParameters c = realize(random_spec(43));
  EXPECT_NE(a.x0, c.x0);
  EXPECT_NE(a.mass, c.mass);
  EXPECT_NE(forced_masses(a), forced_masses(c));
}

// The documented stream: SplitMix64 (reference vector for seed 1234567) and
// uniform = a + (b - a) * (next() >> 11) * 2^-53, masses drawn before x0 before v0.
TEST(Realize, DocumentedStreamAndDrawOrder) {
  RefStream ref(1234567);
  EXPECT_EQ(ref.next(), 6457827717110365317ULL);
  EXPECT_EQ(ref.next(), 3203168211198807973ULL);
  EXPECT_EQ(ref.next(), 9817491932198370423ULL);

  ChainSpec s;
  s.masses = 3;
  s.mass = ValueSpec::uniform(1.0, 2.0);
  s.x0 = ValueSpec::uniform(-1.0, 1.0);
  s.v0 = ValueSpec::signed_uniform(2.0, 3.0);
  s.seed = 1234567;
  const ChainParameters p = realize(s);
  RefStream r(1234567);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(p.mass[i], r.uniform(1.0, 2.0));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(p.x0[i], r.uniform(-1.0, 1.0));
  for (std::size_t i = 0; i < 3; ++i) {
    const double m = r.uniform(2.0, 3.0);
    EXPECT_EQ(p.v0[i], (r.next() >> 63) != 0 ? -m : m);
  }
}

// Fraction selection (documented partial Fisher-Yates) and per-mass parameter order
// reproduced independently; fixed values draw nothing.
TEST(Realize, FractionSelectionFollowsDocumentedAlgorithm) {
  ChainSpec s;
  s.masses = 12;
  s.x0 = ValueSpec::uniform(0.0, 1.0);
  ForceGroupSpec g;
  g.type = ForceType::kHarmonic;
  g.selection.kind = MassSelection::Kind::kFraction;
  g.selection.fraction = 0.25;  // 3 masses
  g.amplitude = ValueSpec::signed_uniform(1.0, 2.0);
  g.omega = ValueSpec::uniform(10.0, 20.0);
  g.phase = ValueSpec::fixed(0.5);
  s.forces.push_back(g);
  s.seed = 77;
  const ChainParameters p = realize(s);

  RefStream r(77);
  for (int i = 0; i < 12; ++i) (void)r.next();  // x0
  std::vector<std::size_t> a(12);
  std::iota(a.begin(), a.end(), 0);
  for (std::size_t j = 0; j < 3; ++j) {
    const std::size_t range = 12 - j;
    const auto idx = std::min(
        range - 1,
        static_cast<std::size_t>(std::floor(r.uniform(0.0, 1.0) * static_cast<double>(range))));
    std::swap(a[j], a[j + idx]);
  }
  std::vector<std::size_t> sel(a.begin(), a.begin() + 3);
  std::sort(sel.begin(), sel.end());
  EXPECT_EQ(forced_masses(p), sel);
  for (std::size_t i : sel) {
    ASSERT_EQ(p.forces[i].harmonic.size(), 1u);
    const double m = r.uniform(1.0, 2.0);
    const double amp = (r.next() >> 63) != 0 ? -m : m;
    EXPECT_EQ(p.forces[i].harmonic[0].amplitude, amp);
    EXPECT_EQ(p.forces[i].harmonic[0].omega, r.uniform(10.0, 20.0));
    EXPECT_EQ(p.forces[i].harmonic[0].phase, 0.5);
  }
}

// MODELS.md §0: "p % of the masses" = round(p * n_K) distinct masses.
TEST(Realize, FractionSelectsRoundedCountOfDistinctMasses) {
  for (auto [n, frac, expected] :
       std::vector<std::tuple<std::size_t, double, std::size_t>>{{100, 0.2, 20},
                                                                 {7, 0.5, 4},
                                                                 {1000, 0.003, 3},
                                                                 {10, 0.0, 0},
                                                                 {10, 1.0, 10},
                                                                 {150, 0.5, 75}}) {
    ChainSpec s;
    s.masses = n;
    ForceGroupSpec g;
    g.type = ForceType::kModifiedSine;
    g.selection.kind = MassSelection::Kind::kFraction;
    g.selection.fraction = frac;
    g.amplitude = ValueSpec::fixed(1.0);
    s.forces.push_back(g);
    const ChainParameters p = realize(s);
    const auto forced = forced_masses(p);
    EXPECT_EQ(forced.size(), expected) << n << " " << frac;
    for (std::size_t i : forced) EXPECT_EQ(p.forces[i].modified_sine.size(), 1u);
  }
}

// MODELS.md §0: "±[a, b]" gives both signs with magnitudes in [a, b] (K-5.3 amplitudes).
TEST(Realize, SignedUniformGivesBothSignsInRange) {
  const ChainParameters p = realize(random_spec(5));
  int positive = 0, negative = 0;
  for (const auto& f : p.forces) {
    for (const auto& s : f.modified_sine) {
      EXPECT_GE(std::fabs(s.amplitude), 1.0e6);
      EXPECT_LE(std::fabs(s.amplitude), 1.0e7);
      EXPECT_GE(s.omega, 5.0e2);
      EXPECT_LE(s.omega, 5.0e3);
      EXPECT_EQ(s.exponent, 95.0);
      (s.amplitude > 0 ? positive : negative)++;
    }
  }
  EXPECT_EQ(positive + negative, 20);
  EXPECT_GT(positive, 0);
  EXPECT_GT(negative, 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE(p.mass[i], 1.0);
    EXPECT_LE(p.mass[i], 2.0);
    EXPECT_GE(p.x0[i], -1e-4);
    EXPECT_LE(p.x0[i], 1e-4);
  }
}

// K-5.4a (MODELS.md §3, seed 000 Table 5.4): x_i0 = i * 3e-7 m (linear), the half-sine
// stiffness modulation c_i = c (1 + 9 sin(0.3142 ((i-1) mod 10))) with c_1 = c_11 = c, and the
// free right end (element n+1 zero).
TEST(Realize, K54aLinearInitialConditionModulationAndFreeEnd) {
  ChainSpec s;
  s.masses = 1000;
  s.mass = ValueSpec::fixed(7.5e-4);
  s.element.c = 2.0e11;
  s.element.d = 2.5e4;
  s.element.modulation_amplitude = 9.0;
  s.element.modulation_omega = 0.3142;
  s.element.modulation_period = 10;
  s.right = EndCondition::kFree;
  s.x0 = ValueSpec::linear(3.0e-7);
  const ChainParameters p = realize(s);
  ASSERT_EQ(p.element.size(), 1001u);
  EXPECT_EQ(p.element[0].c, 2.0e11);    // c_1
  EXPECT_EQ(p.element[10].c, 2.0e11);   // c_11
  EXPECT_EQ(p.element[990].c, 2.0e11);  // c_991
  EXPECT_DOUBLE_EQ(p.element[1].c, 2.0e11 * (1.0 + 9.0 * std::sin(0.3142)));
  EXPECT_DOUBLE_EQ(p.element[15].c, 2.0e11 * (1.0 + 9.0 * std::sin(0.3142 * 5)));
  for (std::size_t i = 0; i < 1000; ++i) {
    EXPECT_GE(p.element[i].c, 2.0e11);
    EXPECT_LE(p.element[i].c, 2.0e12 * 1.0001);
    EXPECT_EQ(p.element[i].d, 2.5e4);
  }
  EXPECT_TRUE(p.element[1000].is_zero());
  EXPECT_FALSE(p.element[0].is_zero());
  EXPECT_DOUBLE_EQ(p.x0[0], 3.0e-7);
  EXPECT_DOUBLE_EQ(p.x0[16], 17 * 3.0e-7);
  EXPECT_DOUBLE_EQ(p.x0[999], 1000 * 3.0e-7);
  for (double v : p.v0) EXPECT_EQ(v, 0.0);
  for (const auto& f : p.forces) EXPECT_TRUE(f.empty());
}

// MODELS.md §1.4: a free left end zeroes element 1; fixed ends keep the wall elements.
TEST(Realize, FreeLeftEnd) {
  ChainSpec s;
  s.masses = 5;
  s.element = {1.0, 2.0, 3.0, 4.0, 6.0, 3.0, 0.0, 0.0, 1};
  s.left = EndCondition::kFree;
  const ChainParameters p = realize(s);
  EXPECT_TRUE(p.element[0].is_zero());
  EXPECT_FALSE(p.element[5].is_zero());
  EXPECT_EQ(p.element[5].ex, 6.0);
  EXPECT_EQ(p.element[3].C, 3.0);
}

// Overrides on inclusive 1-based ranges (K-5.4b masses, K-5.2 two-mass coefficients);
// a free end wins over an element override.
TEST(Realize, Overrides) {
  ChainSpec s;
  s.masses = 10;
  s.mass = ValueSpec::fixed(10.0);
  s.mass_overrides.push_back({5, 7, 0.1});
  s.mass_overrides.push_back({7, 7, 0.5});  // later override wins
  s.element = {1.0e7, 1.0e3, 1.0e14, 1.0e4, 3.0, 3.0, 0.0, 0.0, 1};
  ElementOverride e;
  e.first = 2;
  e.last = 3;
  e.c = 5.0;
  e.ex = 7.0;
  s.element_overrides.push_back(e);
  ElementOverride last;
  last.first = 11;
  last.last = 11;
  last.d = 9.0;
  s.element_overrides.push_back(last);
  s.right = EndCondition::kFree;
  const ChainParameters p = realize(s);
  EXPECT_EQ(p.mass, (std::vector<double>{10, 10, 10, 10, 0.1, 0.1, 0.5, 10, 10, 10}));
  EXPECT_EQ(p.element[0].c, 1.0e7);
  EXPECT_EQ(p.element[1].c, 5.0);
  EXPECT_EQ(p.element[2].c, 5.0);
  EXPECT_EQ(p.element[2].ex, 7.0);
  EXPECT_EQ(p.element[2].d, 1.0e3);  // not overridden
  EXPECT_EQ(p.element[3].c, 1.0e7);
  EXPECT_TRUE(p.element[10].is_zero());
}

// Force groups: explicit list, all, alternate_sign (K-5.8: (-1)^k in chain order), impulse
// times list and drawn time, contact masses start at -|x0| (MODELS.md §1.3).
TEST(Realize, ForceGroups) {
  ChainSpec s;
  s.masses = 8;
  s.x0 = ValueSpec::uniform(-1e-4, 1e-4);
  ForceGroupSpec imp;
  imp.type = ForceType::kImpulse;
  imp.selection.masses = {8, 1, 4};  // given out of order: used in chain order
  imp.amplitude = ValueSpec::fixed(1.0e6);
  imp.times = {1e-4, 0.1, 0.2};
  imp.duration = 1e-3;
  imp.edge = 1e-6;
  imp.alternate_sign = true;
  s.forces.push_back(imp);
  ForceGroupSpec drawn = imp;
  drawn.selection.masses = {2};
  drawn.times.clear();
  drawn.time = ValueSpec::uniform(0.0, 0.099);
  drawn.alternate_sign = false;
  s.forces.push_back(drawn);
  ForceGroupSpec con;
  con.type = ForceType::kContact;
  con.selection.kind = MassSelection::Kind::kAll;
  con.amplitude = ValueSpec::fixed(-1e-2);
  con.stiffness = ValueSpec::fixed(1e7);
  s.forces.push_back(con);
  ForceGroupSpec lin;
  lin.type = ForceType::kHarmonic;
  lin.selection.masses = {3, 6};
  lin.amplitude = ValueSpec::linear(2.0);
  lin.omega = ValueSpec::fixed(50.0);
  s.forces.push_back(lin);
  const ChainParameters p = realize(s);

  const std::size_t pulsed[] = {0, 3, 7};
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& f = p.forces[pulsed[k]].impulse;
    ASSERT_EQ(f.size(), 3u);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(f[j].amplitude, k % 2 == 0 ? 1.0e6 : -1.0e6);
      EXPECT_EQ(f[j].start, imp.times[j]);
      EXPECT_EQ(f[j].duration, 1e-3);
      EXPECT_EQ(f[j].edge, 1e-6);
    }
  }
  ASSERT_EQ(p.forces[1].impulse.size(), 1u);
  EXPECT_GE(p.forces[1].impulse[0].start, 0.0);
  EXPECT_LE(p.forces[1].impulse[0].start, 0.099);
  for (std::size_t i = 0; i < 8; ++i) {
    ASSERT_EQ(p.forces[i].contact.size(), 1u);
    EXPECT_EQ(p.forces[i].contact[0].amplitude, -1e-2);
    EXPECT_EQ(p.forces[i].contact[0].stiffness, 1e7);
    EXPECT_LE(p.x0[i], 0.0);
  }
  ASSERT_EQ(p.forces[2].harmonic.size(), 1u);
  EXPECT_EQ(p.forces[2].harmonic[0].amplitude, 6.0);  // linear: 2 * 3
  EXPECT_EQ(p.forces[5].harmonic[0].amplitude, 12.0);
  EXPECT_EQ(p.forces[5].harmonic[0].omega, 50.0);
  // The contact sign flip uses the drawn magnitudes: same seed without contacts has the
  // same |x0|.
  ChainSpec no_contact = s;
  no_contact.forces.erase(no_contact.forces.begin() + 2);
  const ChainParameters q = realize(no_contact);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(p.x0[i], -std::fabs(q.x0[i]));
}

void expect_rejected(const std::function<void(ChainSpec&)>& edit, const std::string& field) {
  ChainSpec s;
  s.masses = 50;
  s.element = {1.0, 1.0, 1.0, 1.0, 3.0, 3.0, 0.0, 0.0, 1};
  edit(s);
  try {
    (void)realize(s);
    ADD_FAILURE() << "no exception; expected one naming '" << field << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
        << "message '" << e.what() << "' does not name '" << field << "'";
  }
}

ForceGroupSpec group(ForceType t) {
  ForceGroupSpec g;
  g.type = t;
  g.selection.masses = {1, 2};
  g.amplitude = ValueSpec::fixed(1.0);
  return g;
}

// Bad specifications throw std::invalid_argument naming the offending field.
TEST(Realize, BadSpecsThrowNamingTheField) {
  expect_rejected([](ChainSpec& s) { s.masses = 0; }, "chain.masses must be >= 1");
  expect_rejected([](ChainSpec& s) { s.mass = ValueSpec::fixed(0.0); }, "chain.mass");
  expect_rejected([](ChainSpec& s) { s.mass = ValueSpec::uniform(-1.0, 1.0); }, "chain.mass");
  expect_rejected([](ChainSpec& s) { s.mass = ValueSpec::signed_uniform(1.0, 2.0); }, "chain.mass");
  expect_rejected(
      [](ChainSpec& s) {
        s.mass_overrides.push_back({2, 60, 1.0});
      },
      "mass override 1: last (60) exceeds masses (50)");
  expect_rejected(
      [](ChainSpec& s) {
        s.mass_overrides.push_back({1, 2, 1.0});
        s.mass_overrides.push_back({2, 60, 1.0});
      },
      "mass override 2: last (60) exceeds masses (50)");
  expect_rejected(
      [](ChainSpec& s) {
        s.mass_overrides.push_back({0, 2, 1.0});
      },
      "mass override 1: first");
  expect_rejected(
      [](ChainSpec& s) {
        s.mass_overrides.push_back({4, 2, 1.0});
      },
      "mass override 1: first");
  expect_rejected(
      [](ChainSpec& s) {
        s.mass_overrides.push_back({1, 2, -3.0});
      },
      "mass override 1: mass");
  expect_rejected([](ChainSpec& s) { s.element.c = -1.0; }, "chain.element.c");
  expect_rejected([](ChainSpec& s) { s.element.d = -1.0; }, "chain.element.d");
  expect_rejected([](ChainSpec& s) { s.element.C = -1.0; }, "chain.element.C");
  expect_rejected([](ChainSpec& s) { s.element.D = -1.0; }, "chain.element.D");
  expect_rejected([](ChainSpec& s) { s.element.ex = 0.5; }, "chain.element.ex");
  expect_rejected([](ChainSpec& s) { s.element.ev = 0.0; }, "chain.element.ev");
  expect_rejected([](ChainSpec& s) { s.element.c = std::nan(""); }, "chain.element.c");
  expect_rejected([](ChainSpec& s) { s.element.modulation_period = 0; },
                  "chain.element.modulation_period");
  expect_rejected(
      [](ChainSpec& s) {
        s.element.modulation_amplitude = 2.0;
        s.element.modulation_omega = -1.0;
        s.element.modulation_period = 3;
      },
      "chain.element.modulation_amplitude");
  expect_rejected(
      [](ChainSpec& s) {
        ElementOverride o;
        o.first = 50;
        o.last = 52;
        s.element_overrides.push_back(o);
      },
      "element override 1: last (52) exceeds elements (51)");
  expect_rejected(
      [](ChainSpec& s) {
        ElementOverride o;
        o.C = -2.0;
        s.element_overrides.push_back(o);
      },
      "element override 1: C");
  expect_rejected(
      [](ChainSpec& s) {
        ElementOverride o;
        o.ev = 0.9;
        s.element_overrides.push_back(o);
      },
      "element override 1: ev");
  expect_rejected([](ChainSpec& s) { s.x0 = ValueSpec::uniform(1.0, -1.0); }, "chain.x0");
  expect_rejected([](ChainSpec& s) { s.v0 = ValueSpec::signed_uniform(-1.0, 1.0); }, "chain.v0");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kHarmonic);
        g.selection.masses = {3, 51};
        s.forces.push_back(g);
      },
      "force group 1 (harmonic): selection.masses[1] = 51 is out of range");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kHarmonic);
        g.selection.masses = {0};
        s.forces.push_back(g);
      },
      "selection.masses[0] = 0 is out of range");
  expect_rejected(
      [](ChainSpec& s) {
        s.forces.push_back(group(ForceType::kHarmonic));
        auto g = group(ForceType::kContact);
        g.selection.masses = {4, 5, 4};
        s.forces.push_back(g);
      },
      "force group 2 (contact): selection.masses[2] = 4 is duplicated");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kModifiedSine);
        g.selection.kind = MassSelection::Kind::kFraction;
        g.selection.fraction = 1.5;
        s.forces.push_back(g);
      },
      "selection.fraction");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kModifiedSine);
        g.selection.kind = MassSelection::Kind::kFraction;
        g.selection.fraction = -0.1;
        s.forces.push_back(g);
      },
      "selection.fraction");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kImpulse);
        g.duration = -1.0;
        s.forces.push_back(g);
      },
      "force group 1 (impulse): duration");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kImpulse);
        g.edge = 0.0;
        s.forces.push_back(g);
      },
      "force group 1 (impulse): edge");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kImpulse);
        g.time = ValueSpec::uniform(1.0, 0.0);
        s.forces.push_back(g);
      },
      "force group 1 (impulse): time");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kModifiedSine);
        g.exponent = 0.5;
        s.forces.push_back(g);
      },
      "force group 1 (modified_sine): exponent");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kHarmonic);
        g.amplitude = ValueSpec::signed_uniform(2.0, 1.0);
        s.forces.push_back(g);
      },
      "force group 1 (harmonic): amplitude");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kHarmonic);
        g.omega = ValueSpec::uniform(5.0, 1.0);
        s.forces.push_back(g);
      },
      "force group 1 (harmonic): omega");
  expect_rejected(
      [](ChainSpec& s) {
        auto g = group(ForceType::kContact);
        g.stiffness = ValueSpec::fixed(std::nan(""));
        s.forces.push_back(g);
      },
      "force group 1 (contact): stiffness");
}

// Explicit per-mass initial values replace x0 / v0 without drawing, and the contact rule
// x0 = -|x0| (MODELS.md §1.3) applies to them as to drawn values.
TEST(Realize, ExplicitInitialValuesReplaceTheDrawsAndKeepTheContactRule) {
  ChainSpec s;
  s.masses = 3;
  s.element.c = 1.0;
  s.mass = ValueSpec::uniform(1.0, 2.0);
  s.x0 = ValueSpec::uniform(-1.0, 1.0);  // ignored: x0_values is given
  s.x0_values = {0.5, -0.25, 1.0};
  s.v0_values = {1.0, 2.0, 3.0};
  ForceGroupSpec contact;
  contact.type = ForceType::kContact;
  contact.selection.masses = {1};
  contact.amplitude = ValueSpec::fixed(-0.01);
  contact.stiffness = ValueSpec::fixed(10.0);
  s.forces.push_back(contact);
  s.seed = 99;
  const ChainParameters p = realize(s);
  EXPECT_EQ(p.x0, (std::vector<double>{-0.5, -0.25, 1.0}));
  EXPECT_EQ(p.v0, (std::vector<double>{1.0, 2.0, 3.0}));
  // The masses are drawn first and the explicit values draw nothing.
  RefStream r(99);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(p.mass[i], r.uniform(1.0, 2.0));

  // Only the given one of the two is replaced; the other is still drawn.
  ChainSpec t = s;
  t.forces.clear();
  t.v0_values.clear();
  t.v0 = ValueSpec::uniform(5.0, 6.0);
  const ChainParameters q = realize(t);
  EXPECT_EQ(q.x0, (std::vector<double>{0.5, -0.25, 1.0}));
  RefStream r2(99);
  for (std::size_t i = 0; i < 3; ++i) (void)r2.uniform(1.0, 2.0);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(q.v0[i], r2.uniform(5.0, 6.0));
}

TEST(Realize, ExplicitInitialValuesMustHaveOneFiniteEntryPerMass) {
  expect_rejected(
      [](ChainSpec& s) {
        s.x0_values = {1.0, 2.0};
      },
      "chain.x0_values must have one entry per mass: masses = 50 (got 2 entries)");
  expect_rejected([](ChainSpec& s) { s.v0_values.assign(51, 0.0); },
                  "chain.v0_values must have one entry per mass");
  expect_rejected(
      [](ChainSpec& s) {
        s.x0_values.assign(50, 0.0);
        s.x0_values[6] = std::nan("");
      },
      "chain.x0_values[7] must be finite");
}

// A minimal valid spec realizes with walls at both ends and unit masses by default.
TEST(Realize, Defaults) {
  ChainSpec s;
  s.masses = 3;
  s.element.c = 1.0;
  const ChainParameters p = realize(s);
  EXPECT_EQ(p.mass, (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(p.element.size(), 4u);
  EXPECT_EQ(p.element.front().c, 1.0);
  EXPECT_EQ(p.element.back().c, 1.0);
  EXPECT_EQ(p.x0, (std::vector<double>{0.0, 0.0, 0.0}));
  EXPECT_EQ(p.forces.size(), 3u);
}

}  // namespace
