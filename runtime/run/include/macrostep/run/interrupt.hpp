// Stopping a run on request (SIGINT or SIGTERM at the command line; DESIGN.md contract 5: the
// files written so far stay valid).
//
// The caller (the `macrostep` command) owns a StopFlag, sets it from its signal handler, and
// passes its address in MonolithicOptions::stop / CosimOptions::stop. A run reads it (relaxed;
// the value is all that matters) after every macro step, accepted or not (co-simulation), or
// after every output row (monolithic). When it holds a signal number the run stops there:
// the accepted points so far are in the CSV, the metadata JSON says "status": "interrupted"
// with the signal and the time reached, the worker processes are shut down as at the end of a
// run, and RunInterrupted is thrown. A macro step under way is finished first, so a stop takes
// at most one macro step (or output interval) of wall time.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace macrostep::run {

// 0: go on; otherwise the number of the signal that asks the run to stop. Lock-free, so that a
// signal handler may store to it.
using StopFlag = std::atomic<int>;
static_assert(StopFlag::is_always_lock_free);

class RunInterrupted : public std::runtime_error {
 public:
  // `checkpoint`: the final checkpoint written before stopping (a co-simulation), or empty;
  // `checkpoint_problem`: why there is none where there could have been, or empty.
  RunInterrupted(int signal, double time, std::string checkpoint = {},
                 std::string checkpoint_problem = {});
  int signal() const { return signal_; }  // the signal number
  double time() const { return time_; }   // the time the run reached (its last accepted point)
  const std::string& checkpoint() const { return checkpoint_; }
  const std::string& checkpoint_problem() const { return checkpoint_problem_; }

 private:
  int signal_;
  double time_;
  std::string checkpoint_;
  std::string checkpoint_problem_;
};

// "SIGINT", "SIGTERM", ... or "signal N".
std::string signal_name(int signal);

// For the command's stop-signal handler, when a second SIGINT / SIGTERM is about to end the
// process at once (async-signal-safe): while a co-simulation runs, it writes the run's message
// and its metadata ("interrupted"), since the stop after the macro step did not come (a model
// in the master hangs). Nothing otherwise.
void on_repeated_stop_signal() noexcept;

// Throws RunInterrupted(signal, time) if `stop` is set and holds a signal number.
void check_stop(const StopFlag* stop, double time);

}  // namespace macrostep::run
