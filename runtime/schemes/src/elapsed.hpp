// Wall-clock spans of a run (the metadata's time breakdown, seed 000 §4.4). Private to the
// schemes library: the monolithic and the co-simulation runs measure with the same function.
#pragma once

#include <chrono>
#include <cstdint>

namespace macrostep::schemes {

using Clock = std::chrono::steady_clock;

// Nanoseconds from `start` until now.
inline std::int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace macrostep::schemes
