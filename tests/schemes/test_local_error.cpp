// The local-error orders of one macro step from the exact history (run/local_error.hpp,
// METHODS §7.6): B-2016 (seed 001 Eq. 26, METHODS §7.2 O8) on configs/b-2016-fd.toml and
// b-2016-dd.toml, and F-2.6 (seed 003 Table 2.3, O9) on configs/f-2.6.toml. Each case measures
// a few H with the real subsystems and IDA and checks the fitted slope against the published
// order within ±0.3 (the expected slopes and why: methods.md §7.6).
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/run/local_error.hpp"

namespace macrostep {
namespace {

constexpr double kSlopeTolerance = 0.3;

run::LocalErrorResult measure_local_error(const std::string& config_name, const std::string& scheme,
                                          const std::string& approximation, int order,
                                          std::vector<double> step_sizes, std::vector<double> at) {
  const config::RunConfig config =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/" + config_name);
  run::LocalErrorOptions o;
  o.cosim.scheme = *config::parse_scheme(scheme);
  o.cosim.order = config::OrderSetting::fixed(order);
  o.cosim.approximation = polynomials::parse_approximation(approximation);
  o.step_sizes = std::move(step_sizes);
  o.at = std::move(at);
  return run::local_error(config, o);
}

double group_slope(const run::LocalErrorResult& r, const std::string& name) {
  for (const auto& g : r.groups)
    if (g.name == name) return g.slope;
  ADD_FAILURE() << "no group " << name;
  return NAN;
}

// ---- B-2016: seed 001's two-mass oscillator, F/D and D/D, Jacobi and Gauss–Seidel ----

struct B2016Case {
  const char* decomposition;  // fd | dd
  const char* scheme;         // explicit (Jacobi) | gauss-seidel
  const char* approximation;  // lagrange | c1 | c0
  int k;
};

void PrintTo(const B2016Case& c, std::ostream* os) {
  *os << c.decomposition << " " << c.scheme << " " << c.approximation << " k = " << c.k;
}

// The order of the step's error (seed 001 Eq. 26) that methods.md §7.6 derives from O8:
// k + 2 for Lagrange and C1, capped at 3 for C0; one less for the F/D Jacobi step, whose
// feed-through output carries the extrapolation error (C0 with that cap too).
double expected_b2016_order(const B2016Case& c) {
  const bool c0 = std::string(c.approximation) == "c0";
  const bool drop = std::string(c.decomposition) == "fd" && std::string(c.scheme) == "explicit";
  const int order = c.k + (drop ? 1 : 2);
  return c0 ? std::min(order, 3) : order;
}

std::string b2016_name(const ::testing::TestParamInfo<B2016Case>& info) {
  std::string s = std::string(info.param.decomposition) + "_" + info.param.scheme + "_" +
                  info.param.approximation + "_k" + std::to_string(info.param.k);
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

std::vector<B2016Case> b2016_cases() {
  std::vector<B2016Case> cases;
  for (const char* d : {"fd", "dd"})
    for (const char* s : {"gauss-seidel", "explicit"})
      for (const char* a : {"lagrange", "c1", "c0"})
        for (int k = 0; k <= 3; ++k) cases.push_back({d, s, a, k});
  return cases;
}

class B2016LocalError : public ::testing::TestWithParam<B2016Case> {};

TEST_P(B2016LocalError, OrderOfTheStepErrorIsThePublishedOne) {
  const B2016Case& c = GetParam();
  const run::LocalErrorResult r = measure_local_error(
      std::string("b-2016-") + c.decomposition + ".toml", c.scheme, c.approximation, c.k,
      {5e-5, 2.5e-5, 1.25e-5, 6.25e-6}, {3e-3, 4e-3, 5e-3, 6e-3, 7e-3});
  EXPECT_NEAR(r.step_order, expected_b2016_order(c), kSlopeTolerance);
  // The velocities of every variant keep the order of the input approximation plus one.
  const double v = std::string(c.approximation) == "c0" ? std::min(c.k + 2, 3) : c.k + 2;
  EXPECT_NEAR(group_slope(r, "velocities"), v, kSlopeTolerance);
}

INSTANTIATE_TEST_SUITE_P(Seed001, B2016LocalError, ::testing::ValuesIn(b2016_cases()), b2016_name);

// Under the runtime's consistent update (D-1) the coupling variable of an F/D Jacobi step is
// computed from the new states: the drop of seed 001's y is not in u.
TEST(B2016LocalErrorUpdate, JacobiCouplingVariableKeepsTheGaussSeidelOrder) {
  for (int k = 0; k <= 2; ++k) {
    const run::LocalErrorResult r =
        measure_local_error("b-2016-fd.toml", "explicit", "lagrange", k, {5e-5, 2.5e-5, 1.25e-5},
                            {3e-3, 4e-3, 5e-3, 6e-3, 7e-3});
    EXPECT_NEAR(group_slope(r, "outputs"), k + 1, kSlopeTolerance) << "k = " << k;
    EXPECT_NEAR(group_slope(r, "coupling"), k + 2, kSlopeTolerance) << "k = " << k;
  }
}

// ---- F-2.6: seed 003's nonlinear two oscillators, Table 2.3 plus one ----

struct F26Case {
  const char* approximation;
  int q, v;  // seed 003 Table 2.3: local order of positions and velocities
};

void PrintTo(const F26Case& c, std::ostream* os) {
  *os << c.approximation;
}

class F26LocalError : public ::testing::TestWithParam<F26Case> {};

TEST_P(F26LocalError, SlopesAreTable23PlusOne) {
  const F26Case& c = GetParam();
  const run::LocalErrorResult r = measure_local_error("f-2.6.toml", "explicit", c.approximation, 0,
                                                      {2e-4, 1e-4, 5e-5}, {0.01, 0.02, 0.03});
  EXPECT_NEAR(group_slope(r, "positions"), c.q + 1, kSlopeTolerance);
  EXPECT_NEAR(group_slope(r, "velocities"), c.v + 1, kSlopeTolerance);
}

std::string f26_name(const ::testing::TestParamInfo<F26Case>& info) {
  std::string s = info.param.approximation;
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

// Const 2,1 (R = 1), Const 2,2 (R = 2), Lin 2,2 (R = 2), Lin 2,3 (R = 3) as in seed 003
// Fig. 2.7 (models.md F-2.6 for the sets), and the Opt sets of R = 3 and R = 2.
INSTANTIATE_TEST_SUITE_P(
    Seed003, F26LocalError,
    ::testing::Values(F26Case{"const-1-1", 2, 1}, F26Case{"const-2-2-b0", 2, 2},
                      F26Case{"lin-2-2-b0", 3, 2}, F26Case{"lin-2-3-opt", 3, 3},
                      F26Case{"const-2-3-opt", 2, 2}, F26Case{"lin-2-2-opt", 3, 2}),
    f26_name);

TEST(LocalErrorOptions, RefusesWhatItCannotMeasure) {
  EXPECT_THROW(measure_local_error("f-2.6.toml", "explicit", "lagrange", 1, {1e-4}, {0.01}),
               run::SetupError);  // one H gives no slope
  EXPECT_THROW(measure_local_error("f-2.6.toml", "implicit", "lagrange", 1, {2e-4, 1e-4}, {0.01}),
               run::SetupError);
  EXPECT_THROW(measure_local_error("f-2.6.toml", "explicit", "lagrange", 3, {2e-4, 1e-4}, {5e-4}),
               run::SetupError);  // T − 3H < 0
}

}  // namespace
}  // namespace macrostep
