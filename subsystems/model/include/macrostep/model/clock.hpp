// The clock of the time breakdown (solver, idle, communication, interface, snapshot, output):
// monotonic nanoseconds, comparable within one machine. Only differences are meaningful.
#pragma once

#include <chrono>
#include <cstdint>

namespace macrostep::model {

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace macrostep::model
