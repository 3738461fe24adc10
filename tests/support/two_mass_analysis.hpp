// testing::linear_two_mass (test_chain.hpp) as runtime/analysis sees it: the tests that check the
// runtime's steps against the analysis's exact recurrence build both from the same numbers.
#pragma once

#include "macrostep/analysis/stability.hpp"

namespace macrostep::testing {

inline analysis::TwoMass linear_two_mass_for_analysis() {
  analysis::TwoMass m;
  m.m1 = 1.0;
  m.m2 = 2.0;
  m.c1 = 1e4;
  m.cc = 5e3;
  m.c2 = 2e4;
  return m;
}

}  // namespace macrostep::testing
