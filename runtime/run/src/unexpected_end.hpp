// What the user gets when the master process ends in the middle of a co-simulation without the
// run returning (private to the run library; DESIGN.md contract 5: failure is reported, never
// hidden). A model that runs in the master (the in-process executor, a hosted subsystem) can end
// the process itself: a plugin or FMU that calls exit(), or that crashes (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT). Worker processes contain both (the process executor reports them as
// worker failures); in the master this guard does what can be done:
//   - exit(): the run is finished as failed (every observer: the pending row, the closed tables,
//     the metadata with the cause), a message names the exit status, and the process ends with
//     status 1 instead of the model's. Models often run on several threads at once (a
//     subsystem's nominal and extra runs): a second thread that calls exit() meanwhile, or that
//     crashes in the library teardown such a call starts, waits for the first to end the
//     process instead of ending it before the report is written (at most 10 s: a finish that
//     is stuck does not hold the process alive; then a second exit() ends it with status 1, a
//     crash as below).
//   - a fatal signal: stderr gets a message and the metadata file the failure document prepared
//     when the guard was armed (written with async-signal-safe calls only: no statistics, the
//     result file holds the rows written so far); then the signal's previous action proceeds
//     (the shared-memory cleanup, the default action). Of several threads that die at once, one
//     writes; the others wait until it has written (at most 5 s), then die themselves.
//   - a hang: the first SIGINT / SIGTERM asks the run to stop after its macro step, which a hung
//     model never ends; the second ends the process (the command's handler), and before it does
//     so it calls stop_signal_repeated(), which writes the prepared "interrupted" document and a
//     message the same way. --hang-timeout watches worker processes only: a model in the
//     master is not watched (the process executor, the default, isolates models).
// One guard is armed at a time (the run driver's); not thread-safe beyond that.
#pragma once

#include <functional>
#include <string>

#include "macrostep/run/observer.hpp"

namespace macrostep::run {

class UnexpectedEnd {
 public:
  // Arms the guard until destruction. `finish` finishes the run with a failure (the driver's
  // observers); `json_path` (may be empty: no metadata file) receives `crash_json` on a fatal
  // signal.
  // `stop_json` is written instead when a second stop signal ends the process.
  UnexpectedEnd(std::function<void(const RunEnd&)> finish, const std::string& json_path,
                const std::string& crash_json, const std::string& stop_json);
  ~UnexpectedEnd();
  UnexpectedEnd(const UnexpectedEnd&) = delete;
  UnexpectedEnd& operator=(const UnexpectedEnd&) = delete;

  // From a signal handler (async-signal-safe): the process is about to die of a second stop
  // signal; while a guard is armed, its message and metadata are written.
  static void stop_signal_repeated() noexcept;

  // Called by the exit handler only.
  void process_exiting(int status);

 private:
  std::function<void(const RunEnd&)> finish_;
};

}  // namespace macrostep::run
