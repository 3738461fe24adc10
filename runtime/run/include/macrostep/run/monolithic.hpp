// The monolithic run: the whole model in one IDA (spec/MODELS.md §4.2), as the timing
// baseline (`macrostep run --monolithic`) or, with the tolerances of the global reference
// (rtol 1e-10, atol_pos 1e-13, atol_vel 1e-10; seed 000 §5), as the reference that co-simulated
// runs are compared against (`macrostep reference`).
//
// Output: a CSV with a row at t = 0, at every k * output_interval < end_time and at end_time
// (or at given times). The model is the configuration's system description:
//  - with an uncut model (SystemDescription::whole; a chain lowered from [model] and
//    [partition]) that model is integrated: columns the states the connections read (the
//    coupling bodies x_i, v_i, global 1-based index, chain order) or, with all_states or without
//    connections, every state in the model's order; then the coupling variables lambda_1..
//    lambda_nc, each evaluated from the states by its connection's law (system::UncutSystem);
//  - otherwise its CoupledSystem assembled into one IDA system (system::MonolithicSystem):
//    columns every output "<subsystem>.<output>" (all_states: every state "<subsystem>.<state>"),
//    then the coupling variables, unknowns of the assembled DAE.
// Either way the columns are those of a co-simulation of the same configuration, so that
// `compare` matches them. Beside it, "<stem>.json" with the configuration text, a model
// summary, solver options, statistics and times.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/run/interrupt.hpp"

namespace macrostep::run {

// A failure before integration starts that the user can fix (the output file cannot be
// created, an override is out of range). Configuration problems are config::ConfigError.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --stop-time of any run: finite and at least config::kMinEndTime (SetupError naming the flag).
void check_stop_time(const std::optional<double>& stop_time);

struct MonolithicOptions {
  bool reference = false;           // reference tolerances and file name
  std::optional<double> stop_time;  // replaces simulation.end_time (> 0)
  std::optional<double> rtol;       // replaces solver.rtol (> 0, < 1); not with reference
  // Non-empty: write rows at t = 0 and exactly at these times (increasing, >= 0; the run ends
  // at the last) instead of the output_interval grid, e.g. the macro points of a
  // co-simulation, so that compare needs no interpolation (MODELS.md §4.1: the reference "on
  // the same output points"). Excludes stop_time.
  std::vector<double> times;
  std::string output_file;  // empty: config::default_output_file()
  // Existing files may be replaced, except a result of another kind of run (the Python
  // package's overwrite=True); else only the run's own earlier result is (ResultFiles).
  bool replace_files = false;
  bool all_states = false;  // OR-ed with [output].all_states
  // Progress line on stderr: kAuto shows it when stderr is a terminal and the run has taken
  // more than about one second.
  enum class Progress : std::uint8_t { kAuto, kAlways, kNever } progress = Progress::kAuto;
  std::string command_line;        // recorded in the metadata
  const StopFlag* stop = nullptr;  // interrupt.hpp: checked after every output row
};

struct MonolithicResult {
  std::string csv_path;
  std::string json_path;
  std::vector<std::string> columns;
  // One per column, as CosimResult::units: an output's unit from its model, a state's as
  // model::state_units derives it, a coupling variable's from its law; "" where nothing says.
  std::vector<std::string> units;
  std::vector<std::string> descriptions;  // as CosimResult::descriptions
  std::vector<double> final_values;       // the last row written
  double end_time = 0.0;
  std::size_t rows = 0;
  ida::IntegratorOptions solver;
  ida::AdvanceStats stats;
  std::int64_t wall_ns = 0;
  // Set when a model ended the simulation before the end time (ida::ModelTerminated): what it
  // said and where; the rows up to that point are written, the metadata's status "terminated".
  std::string terminated;
};

// The IDA options of a [solver] table: tolerances (unset atols follow rtol), linear solver,
// maximum order and steps. Every run of the configuration (monolithic, co-simulation
// subsystems) integrates with these.
ida::IntegratorOptions integrator_options(const config::SolverConfig& solver);

// Runs the model of `config` from t = 0 to the end time, writing rows as it goes.
// Throws config::ConfigError (the library rejects the model), SetupError (options, output
// file) before anything is integrated; ida::IntegrationError when IDA fails - the CSV then
// holds every row up to the failure and the JSON records status "failed" with time and cause;
// output::OutputError if writing fails mid-run.
MonolithicResult run_monolithic(const config::RunConfig& config, const MonolithicOptions& options);

// Human-readable summary of a finished run (a few final values, statistics, wall time).
void print_summary(std::ostream& out, const config::RunConfig& config,
                   const MonolithicOptions& options, const MonolithicResult& result);

}  // namespace macrostep::run
