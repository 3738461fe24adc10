// Stopping a run on request (interrupt.hpp).
#include "macrostep/run/interrupt.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <utility>

namespace macrostep::run {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return fmt::format("signal {}", signal);
  }
}

RunInterrupted::RunInterrupted(int signal, double time, std::string checkpoint,
                               std::string checkpoint_problem)
    : std::runtime_error(
          fmt::format("interrupted by {} at t = {:.9g} s", signal_name(signal), time)),
      signal_(signal),
      time_(time),
      checkpoint_(std::move(checkpoint)),
      checkpoint_problem_(std::move(checkpoint_problem)) {}

void check_stop(const StopFlag* stop, double time) {
  if (stop == nullptr) return;
  const int signal = stop->load(std::memory_order_relaxed);
  if (signal != 0) throw RunInterrupted(signal, time);
}

}  // namespace macrostep::run
