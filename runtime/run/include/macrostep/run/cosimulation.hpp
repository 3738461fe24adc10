// The co-simulation run of `macrostep run CONFIG` (without --monolithic): the [cosim] table of
// the configuration, overridden by the command line, turned into a run of the scheme it names
// (explicit Jacobi: explicit_jacobi.hpp; implicit, semi-implicit, waveform: implicit.hpp) of the
// partitioned chain or of a [[subsystem]] system description (system/system_description.hpp) on
// the in-process, process or MPI executor, with its result files and summary (DESIGN.md "The
// macrostep command"; METHODS.md §3, §5, §6, §9). The files and reports of a run are observers
// of it (observer.hpp); a caller adds its own through CosimOptions::observers.
//
// Output: a CSV with a row at every output_every-th accepted macro point (T_0 and the last
// accepted point always): `time`, the coupling-body states x_i, v_i (global 1-based index,
// chain order; with all_states every state of every subsystem in chain order instead), then
// the coupling variables lambda_1..lambda_nc. A system description writes every output of every
// subsystem as "<subsystem>.<output>" (all_states: "<subsystem>.<state>"), then the coupling
// variables named after their connections. The columns equal those of a monolithic or
// reference run of the same configuration, so `macrostep compare` works column by column
// (the reference is interpolated to the macro points). Rows reach the OS as they are
// written. Beside it "<stem>.json": configuration text, model and partition, the resolved
// co-simulation and solver options, statistics (macro steps, rejections, order histogram by
// steps and by simulated time, H, micro steps and evaluations per subsystem) and the time
// breakdown of seed 000 §4.4 / Eq. 4.5 in seconds.
//
// Failures: schemes::SubsystemFailure, control::StepSizeUnderflow, ida::IntegrationError,
// Diverged, StabilityLimited and output::OutputError propagate after the CSV holds every row
// written so far (plus the last accepted point) and the JSON records status "failed" with the
// cause.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/control/order.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::run {

// A quantity whose error the macro-step controller cannot see: no quantity of its unit under the
// same absolute tolerance swings by more than ten times that tolerance over the run
// (tolerance_check.hpp has the rule).
struct ToleranceAboveSwing {
  std::string key;  // "atol_pos", "atol_vel" or "atol_u" (a [cosim] key)
  double atol = 0.0;
  std::string unit;    // its unit, "" where its model gives none
  std::string name;    // the monitored output or coupling variable (a result column)
  double swing = 0.0;  // max − min over the accepted points from `from` to `to`
  double from = 0.0, to = 0.0;
};

struct CosimResult {
  CosimSettings settings;
  std::string csv_path;  // the result file (CSV, or HDF5 for an .h5/.hdf5 name)
  std::string json_path;
  std::string steps_path;            // the steps CSV, or the HDF5 result file that holds /steps
  std::vector<std::string> columns;  // the output or state columns, then the coupling variables
  std::size_t coupling_count = 0;    // the coupling-variable columns at the end of `columns`
  // One per column (result_units in result_table.hpp): an output's unit as its model reports it
  // (model::Subsystem::output_unit), a state's as model::state_units derives it, a coupling
  // variable's from its law; "" where nothing says. The result files carry them too (the
  // JSON's output.units, the HDF5 table's attribute "units").
  std::vector<std::string> units;
  // One per column likewise: what the model or law says the variable is (Subsystem::
  // output_description, state_description, CouplingLaw::variable_descriptions), "" where it
  // says nothing (the JSON's columns, the HDF5 attribute "descriptions").
  std::vector<std::string> descriptions;
  std::vector<double> final_values;  // the last row written
  double final_time = 0.0;
  std::size_t rows = 0;
  schemes::SchemeResult run;
  // Accepted steps by degree and the simulated time they cover (order histogram, MODELS §4.3).
  std::array<double, control::kMaxKappa + 1> time_by_kappa{};
  std::int64_t wall_ns = 0;
  std::string placement;  // PlacementMap::describe() of a process-executor run
  // Set when a model ended the simulation before the end time (schemes::ModelTerminatedRun):
  // what it said and where; the rows up to the last accepted point are written, the metadata's
  // status is "terminated".
  std::string terminated;
  // Set when a completed run ends (AbsoluteToleranceCheck).
  std::vector<ToleranceAboveSwing> tolerance_above_swing;
};

// A coupling variable grew without bound or stopped being finite (the divergence guard: past
// 1e10 times max(|u(T0)|, atol_u/rtol)); the message names it, the time and what to try.
class Diverged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An adaptive explicit run crawls at a stability limit (the stability-limit guard: at its pace
// more than 1e8 macro steps remain and the linearised system says why); the message names the
// pace, the limit and the implicit scheme.
class StabilityLimited : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the co-simulation of `config`. Throws as described above.
CosimResult run_cosimulation(const config::RunConfig& config, const CosimOptions& options);

// Human-readable summary: final coupling variables, macro steps and rejections, mean H, order
// histogram, micro steps per subsystem, time breakdown.
void print_summary(std::ostream& out, const config::RunConfig& config, const CosimResult& result);

}  // namespace macrostep::run
