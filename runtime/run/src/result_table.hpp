// The result table of a co-simulation run (private to the run library; docs/reference/commands.md):
// which columns it has, and the observer that writes a row at every output_every-th accepted macro
// point and at the last one, or at the output grid's times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "result_files.hpp"

namespace macrostep::run {

// One output written as a result column.
struct OutputColumn {
  std::string name;
  system::OutputRef output;
};

// The outputs of the result columns (DESIGN.md column naming): system::result_outputs of the
// configuration's description (a lowered chain: the coupling bodies' x and v, interleaved, a body
// next to two cuts once; otherwise every output "<subsystem>.<output>", a name a model repeats
// once), as its monolithic run writes them.
std::vector<OutputColumn> output_columns(const config::RunConfig& config,
                                         const system::CoupledSystem& system);

// The result columns: the output columns or every state (named by system::variable_name), then
// the coupling variables (lambda_L, or named after their connection). state_offset[i] is
// subsystem i's first state column (all_states).
void result_columns(const config::RunConfig& config, const system::CoupledSystem& system,
                    const std::vector<OutputColumn>& outputs, bool all_states,
                    std::vector<std::string>& columns, std::vector<std::size_t>& state_offset);

// The unit and the description of every column of result_columns() (CosimResult::units,
// ::descriptions): an output column's from its model, a state column's unit as
// model::state_units gives it and its description from the model (all_states), a coupling
// variable's from its law (CoupledSystem::coupling_unit, ::coupling_description); "" where none
// of them says.
struct ColumnLabels {
  std::vector<std::string> units, descriptions;
};
ColumnLabels result_labels(const system::CoupledSystem& system,
                           const std::vector<OutputColumn>& outputs, bool all_states,
                           std::size_t column_count);

// The row of the newest accepted macro point (what a checkpoint keeps of the table).
struct ResultRow {
  std::vector<double> values;
  double time = 0.0;
  bool pending = false;  // the point is not in the file yet
};

// Writes the result rows: every output_every-th accepted point and the last one (t >= end
// time); a point not yet written stays pending and reaches the file when the run ends, however
// it ends. Keeps result.final_values / final_time (the last row written) and result.rows.
//
// With a grid interval Δ > 0 (rows = "grid") the rows are at the grid times k·Δ instead: those
// inside an accepted step from the nominal runs' output samples (AcceptedPoint::pass), the
// coupling variables there the laws applied to those outputs (a constraint's multiplier, which
// no law gives from outputs, linear between the step's ends); a macro point on the grid (within
// model::kGridTolerance·Δ) from the point itself, at its grid time; and the last point (t >= end
// time) wherever it is. Nothing is pending: every row is written at its step's accept; row()
// holds the newest accepted point (what a checkpoint keeps).
class ResultTable final : public RunObserver {
 public:
  // `outputs` and `state_offset` as output_columns() and result_columns() made them for
  // result.columns; with all_states the rows hold every accepted state (read from the executor;
  // not with a grid).
  ResultTable(ResultFiles& files, const system::CoupledSystem& system,
              std::vector<OutputColumn> outputs, std::vector<std::size_t> state_offset,
              bool all_states, int output_every, double end_time, double grid_interval,
              CosimResult& result);

  // Continues the newest row of a checkpoint; checkpoint::CheckpointError if it does not fit.
  void resume(const checkpoint::Checkpoint& c);
  const ResultRow& row() const { return row_; }

  void started(executors::Executor& executor) override;
  void accepted(const schemes::AcceptedPoint& p) override;
  // Writes the pending row and closes the tables. An output::OutputError propagates when the
  // run completed; after a failure it is contained (the run's own failure is reported).
  void finished(const RunEnd& end) override;

 private:
  void flush();
  void write(double time, const std::vector<double>& values);
  // Rows at the grid times inside the step that ended at p and at p if it is on the grid or last.
  void accepted_on_grid(const schemes::AcceptedPoint& p);

  ResultFiles& files_;
  const system::CoupledSystem& system_;
  std::vector<OutputColumn> outputs_;
  std::vector<std::size_t> state_offset_;
  bool all_states_;
  int output_every_;
  double end_time_;
  double grid_interval_;
  // The grid index of the newest macro point written as a grid row (T_0's is 0; −1: none yet).
  std::int64_t last_grid_point_ = -1;
  CosimResult& result_;
  // Scratch of accepted_on_grid: one grid time's outputs, coupling variables and row.
  std::vector<std::vector<double>> sample_outputs_;
  std::vector<double> sample_u_, sample_row_;
  const executors::Executor* executor_ = nullptr;
  ResultRow row_;
};

}  // namespace macrostep::run
