// The result table of a co-simulation run (result_table.hpp).
#include "result_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <stdexcept>

#include "macrostep/model/output_grid.hpp"

namespace macrostep::run {

std::vector<OutputColumn> output_columns(const config::RunConfig& config,
                                         const system::CoupledSystem& system) {
  std::vector<OutputColumn> out;
  for (auto& o : system::result_outputs(*config.system_description, system)) {
    out.push_back({std::move(o.name), o.output});
  }
  return out;
}

void result_columns(const config::RunConfig& config, const system::CoupledSystem& system,
                    const std::vector<OutputColumn>& outputs, bool all_states,
                    std::vector<std::string>& columns, std::vector<std::size_t>& state_offset) {
  const std::size_t ns = system.subsystem_count();
  state_offset.assign(ns + 1, 0);
  if (all_states) {
    for (std::size_t i = 0; i < ns; ++i) {
      const auto& sub = system.subsystem(i);
      for (std::size_t j = 0; j < sub.state_size(); ++j) {
        columns.push_back(system::variable_name(*config.system_description, i, sub.state_name(j)));
      }
      state_offset[i + 1] = state_offset[i] + sub.state_size();
    }
  } else {
    for (const auto& c : outputs) columns.push_back(c.name);
  }
  for (std::size_t c = 0; c < system.coupling_count(); ++c) {
    columns.push_back(system.coupling_name(c));
  }
}

ColumnLabels result_labels(const system::CoupledSystem& system,
                           const std::vector<OutputColumn>& outputs, bool all_states,
                           std::size_t column_count) {
  ColumnLabels labels;
  if (all_states) {
    for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
      const model::Subsystem& sub = system.subsystem(i);
      const auto states = model::state_units(sub);
      labels.units.insert(labels.units.end(), states.begin(), states.end());
      for (std::size_t j = 0; j < sub.state_size(); ++j) {
        labels.descriptions.push_back(sub.state_description(j));
      }
    }
  } else {
    for (const auto& c : outputs) {
      const model::Subsystem& sub = system.subsystem(c.output.subsystem);
      labels.units.push_back(sub.output_unit(c.output.output));
      labels.descriptions.push_back(sub.output_description(c.output.output));
    }
  }
  for (std::size_t c = 0; c < system.coupling_count(); ++c) {
    labels.units.push_back(system.coupling_unit(c));
    labels.descriptions.push_back(system.coupling_description(c));
  }
  labels.units.resize(column_count);
  labels.descriptions.resize(column_count);
  return labels;
}

namespace {

// The CSV row of an accepted point: the output columns from p.outputs, or (all_states, the
// executor given) every subsystem's accepted state, then the coupling variables.
void fill_row(const schemes::AcceptedPoint& p, const system::CoupledSystem& system,
              const std::vector<OutputColumn>& outputs, const executors::Executor* all_states,
              const std::vector<std::size_t>& state_offset, std::vector<double>& row) {
  std::span<double> r(row);
  std::size_t state_columns = outputs.size();
  if (all_states != nullptr) {
    state_columns = state_offset.back();
    for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
      all_states->accepted_state(i,
                                 r.subspan(state_offset[i], state_offset[i + 1] - state_offset[i]));
    }
  } else {
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      r[j] = p.outputs[outputs[j].output.subsystem][outputs[j].output.output];
    }
  }
  std::copy(p.u.begin(), p.u.end(), r.begin() + static_cast<std::ptrdiff_t>(state_columns));
}

}  // namespace

ResultTable::ResultTable(ResultFiles& files, const system::CoupledSystem& system,
                         std::vector<OutputColumn> outputs, std::vector<std::size_t> state_offset,
                         bool all_states, int output_every, double end_time, double grid_interval,
                         CosimResult& result)
    : files_(files),
      system_(system),
      outputs_(std::move(outputs)),
      state_offset_(std::move(state_offset)),
      all_states_(all_states),
      output_every_(output_every),
      end_time_(end_time),
      grid_interval_(grid_interval),
      result_(result) {
  row_.values.resize(result.columns.size());
}

void ResultTable::resume(const checkpoint::Checkpoint& c) {
  if (c.last_row.size() != row_.values.size()) {
    throw checkpoint::CheckpointError(
        "the checkpoint's result row or order histogram does not fit its configuration");
  }
  row_.values = c.last_row;
  row_.time = c.last_row_time;
  row_.pending = c.last_row_pending;
  result_.final_values = c.last_row;
  result_.final_time = c.last_row_time;
  if (grid_interval_ > 0.0) {
    // The checkpoint's point was written as its grid time's row if it lies on one.
    if (const auto k = model::grid_index_at(c.last_row_time, grid_interval_)) last_grid_point_ = *k;
  }
}

void ResultTable::started(executors::Executor& executor) {
  if (all_states_) executor_ = &executor;
}

void ResultTable::accepted(const schemes::AcceptedPoint& p) {
  if (grid_interval_ > 0.0) return accepted_on_grid(p);
  // The state is valid here: the executor has accepted it.
  fill_row(p, system_, outputs_, executor_, state_offset_, row_.values);
  row_.time = p.time;
  row_.pending = true;
  if (p.step % static_cast<std::uint64_t>(output_every_) == 0 || p.time >= end_time_) flush();
}

void ResultTable::accepted_on_grid(const schemes::AcceptedPoint& p) {
  const std::size_t ns = system_.subsystem_count(), nc = system_.coupling_count();
  const std::size_t coupling_column = outputs_.size();
  if (!p.pass.empty()) {
    const model::GridRange inside = model::grid_inside(p.start, p.time, grid_interval_);
    const auto count = static_cast<std::size_t>(inside.size());
    sample_outputs_.resize(ns);
    sample_u_.resize(nc);
    sample_row_.resize(row_.values.size());
    for (std::size_t i = 0; i < ns; ++i) {
      if (p.pass[i].nominal.sample_times.size() != count) {
        throw std::logic_error(fmt::format(
            "subsystem {} sampled {} output times in the step [{:.9g}, {:.9g}], the grid has {}",
            i + 1, p.pass[i].nominal.sample_times.size(), p.start, p.time, count));
      }
    }
    for (std::size_t j = 0; j < count; ++j) {
      const double t =
          model::grid_time(inside.first + static_cast<std::int64_t>(j), grid_interval_);
      for (std::size_t i = 0; i < ns; ++i) {
        const std::size_t ny = system_.subsystem(i).output_size();
        const auto first =
            p.pass[i].nominal.sample_values.begin() + static_cast<std::ptrdiff_t>(j * ny);
        sample_outputs_[i].assign(first, first + static_cast<std::ptrdiff_t>(ny));
      }
      system_.evaluate_couplings(sample_outputs_, sample_u_);
      const double w = (t - p.start) / (p.time - p.start);
      for (std::size_t c = 0; c < nc; ++c) {  // a multiplier: linear between the step's ends
        if (system_.is_constraint(c)) {
          sample_u_[c] = (1.0 - w) * row_.values[coupling_column + c] + w * p.u[c];
        }
      }
      for (std::size_t k = 0; k < outputs_.size(); ++k) {
        sample_row_[k] = sample_outputs_[outputs_[k].output.subsystem][outputs_[k].output.output];
      }
      std::copy(sample_u_.begin(), sample_u_.end(),
                sample_row_.begin() + static_cast<std::ptrdiff_t>(coupling_column));
      write(t, sample_row_);
    }
  }
  fill_row(p, system_, outputs_, nullptr, state_offset_, row_.values);
  row_.time = p.time;
  row_.pending = false;
  if (const auto k = model::grid_index_at(p.time, grid_interval_)) {
    // Steps shorter than the grid's tolerance (a stiff start: H of 1e-16 s) put several macro
    // points on one grid time; the first is its row, the file's times stay increasing.
    if (*k > last_grid_point_) write(model::grid_time(*k, grid_interval_), row_.values);
    last_grid_point_ = std::max(last_grid_point_, *k);
  } else if (p.time >= end_time_ || p.pass.empty()) {
    write(p.time, row_.values);
  }
}

void ResultTable::write(double time, const std::vector<double>& values) {
  files_.results().write_row(time, values);
  result_.final_values = values;
  result_.final_time = time;
}

void ResultTable::flush() {
  write(row_.time, row_.values);
  row_.pending = false;
}

void ResultTable::finished(const RunEnd& end) {
  try {
    if (row_.pending) flush();
    files_.close_tables();
  } catch (const output::OutputError&) {
    result_.rows = files_.results().rows();
    if (end.failure == nullptr) throw;
    return;
  }
  result_.rows = files_.results().rows();
}

}  // namespace macrostep::run
