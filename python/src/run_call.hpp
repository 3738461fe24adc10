// One run of the Python package (python/macrostep: run, reference, sweep) through the run driver
// of the `macrostep` command (runtime/run: run_cosimulation, run_monolithic), with the driver's
// own configuration reader, checks and result files. Plain C++: the module (module.cpp) binds it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/interrupt.hpp"

namespace macrostep::python {

// A keyword argument that cannot be used (an unknown scheme name, ...): the module raises
// ValueError with the message, which names the argument and the allowed values.
class ArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// What a run is asked for; the optional members left unset keep the configuration's values, as
// the command line's flags do.
struct RunRequest {
  // A configuration file, or (with `config_text`) the name of the text in messages; relative
  // file names inside the configuration resolve against its folder.
  std::string config_path;
  std::optional<std::string> config_text;
  std::vector<std::string> sets;      // "KEY=VALUE" edits in order (the command's --set)
  std::string kind = "cosimulation";  // "cosimulation", "monolithic" or "reference"
  std::optional<double> stop_time;    // --stop-time
  std::optional<double> rtol;         // --rtol (not with "reference")
  std::optional<double> step_size;    // --step-size (co-simulation)
  std::optional<std::string> scheme, estimator, order, executor;  // as the flags (co-simulation)
  std::string output;  // the result file (.csv, or .h5); required
  // overwrite=True: existing files are replaced (the package checked them); else the run
  // driver replaces only the run's own earlier result (MonolithicOptions::replace_files).
  bool overwrite = false;
  bool all_states = false;  // --all-states
  bool progress = false;    // --progress; otherwise no progress line
  // The `macrostep` binary that the process executor starts as its workers; empty: none known,
  // and a run on the process executor is refused (ArgumentError) before anything starts.
  std::string worker;
  std::string command_line;  // recorded in the metadata
};

// What the run driver tells about a finished run; the tables are in the files it names.
struct RunReply {
  std::string result_path, json_path, steps_path;  // steps_path empty without a steps table
  std::vector<std::string> columns;                // without "time"
  std::vector<std::string> units;                  // one per column ("" where unknown)
  std::vector<std::string> descriptions;           // one per column ("" where none)
  std::string summary;                             // the command's summary text
  double wall_s = 0.0;
};

// Loads the configuration with its edits (as run() does) and returns it: config::ConfigError for
// any problem. Thread-safe.
config::RunConfig load(const std::string& config_path, const std::optional<std::string>& text,
                       const std::vector<std::string>& sets);

// Loads the configuration (config::load_config or parse_config with the edits), checks the
// request and runs it to the end. Throws ArgumentError for an unusable request,
// config::ConfigError and run::SetupError before anything runs, run::RunInterrupted when `stop`
// holds a signal number (after the macro step or output row under way), and the run driver's
// failures (run::failure_message tells them) once it has started. Runs one at a time in a
// process (a mutex): the run driver keeps one crash guard per process. Thread-safe otherwise;
// needs no Python.
RunReply run(const RunRequest& request, const run::StopFlag* stop);

}  // namespace macrostep::python
