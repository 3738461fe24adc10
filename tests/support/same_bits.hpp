// Bit-for-bit comparison of results (DESIGN.md contract 1: one numerical result however a run
// executes), shared by the test programs that compare executors, passes and restarts.
#pragma once

#include <cstring>
#include <span>
#include <vector>

namespace macrostep::testing {

// Same length and the same bytes: NaN payloads and the sign of zero count, unlike ==. Empty
// spans may have no data pointer, which memcmp must not get.
inline bool same_bits(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

inline bool same_bits(const std::vector<std::vector<double>>& a,
                      const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!same_bits(a[k], b[k])) return false;
  }
  return true;
}

}  // namespace macrostep::testing
