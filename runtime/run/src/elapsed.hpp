// Wall-clock spans of a run (the metadata's time breakdown, seed 000 §4.4). Private to the run
// library: the monolithic and the co-simulation runs measure with the same functions.
#pragma once

#include <chrono>
#include <cstdint>

namespace macrostep::run {

using Clock = std::chrono::steady_clock;

// Nanoseconds from `start` until now.
inline std::int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// Nanoseconds as seconds, correctly rounded (x / 1e9, not x · 1e-9: a file shows 0.000357915,
// not 0.00035791500000000005, and round(s · 1e9) gives the nanoseconds back).
inline double seconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

}  // namespace macrostep::run
