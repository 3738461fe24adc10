// The progress line of long runs (monolithic and co-simulation): "\r<status>" on stderr at most
// five times a second, once the run qualifies (stderr is a terminal and the run has taken more
// than a second, or always with --progress). Private to the run library.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "macrostep/run/monolithic.hpp"

namespace macrostep::run {

class ProgressLine {
 public:
  ProgressLine(MonolithicOptions::Progress mode, double end_time)
      : mode_(mode), end_time_(end_time), interactive_(::isatty(STDERR_FILENO) == 1) {}

  // detail() returns the run-specific part of the line; it is called only when the line is
  // printed, so building it costs nothing on the other calls.
  template <class Detail>
  void update(double t, Detail&& detail, bool last = false) {
    if (mode_ == MonolithicOptions::Progress::kNever) return;
    const auto now = Clock::now();
    if (mode_ == MonolithicOptions::Progress::kAuto &&
        (!interactive_ || now - start_ < std::chrono::seconds(1))) {
      return;
    }
    if (shown_ && !last && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    shown_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const std::string d = detail();
    fmt::print(stderr, "\rt = {:.6g} / {:.6g} s ({:5.1f} %), {}, {:.1f} s elapsed  ", t, end_time_,
               100.0 * t / end_time_, d, elapsed);
    std::fflush(stderr);
  }

  // Completes a shown line with the final state (the last update may have been skipped).
  template <class Detail>
  void finish(double t, Detail&& detail) {
    if (!shown_) return;
    update(t, detail, true);
    fmt::print(stderr, "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  MonolithicOptions::Progress mode_;
  double end_time_;
  bool interactive_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

}  // namespace macrostep::run
