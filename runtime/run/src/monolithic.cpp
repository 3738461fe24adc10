#include "macrostep/run/monolithic.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sundials/sundials_config.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>

#include "elapsed.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/run/failure.hpp"
#include "macrostep/system/monolithic_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "macrostep/system/uncut_system.hpp"
#include "memory_estimate.hpp"
#include "progress_line.hpp"
#include "result_files.hpp"
#include "run_json.hpp"

namespace macrostep::run {

namespace {

using json = nlohmann::ordered_json;

config::ResultKind result_kind(const MonolithicOptions& options) {
  return options.reference ? config::ResultKind::kReference : config::ResultKind::kMonolithic;
}

// 0, k * interval for every k with k * interval < end (missing end by less than 1e-9 of an
// interval counts as reaching it: no sliver step), then end. k * interval, not a running sum,
// so the grid does not drift and equals the grid of any other run with the same settings.
std::vector<double> output_times(double end, double interval) {
  std::vector<double> times{0.0};
  for (std::size_t k = 1;; ++k) {
    const double t = static_cast<double>(k) * interval;
    if (t >= end - 1e-9 * interval) break;
    times.push_back(t);
  }
  times.push_back(end);
  return times;
}

ida::IntegratorOptions solver_options(const config::RunConfig& config,
                                      const MonolithicOptions& options) {
  config::SolverConfig effective = config.solver;
  if (options.rtol) effective.rtol = *options.rtol;  // unset atols follow the new rtol
  ida::IntegratorOptions o = integrator_options(effective);
  if (options.reference) {
    // Global reference (MODELS.md §4.2; seed 000 §5).
    o.rtol = 1e-10;
    o.atol_pos = 1e-13;
    o.atol_vel = 1e-10;
  }
  return o;
}

template <typename Range, typename Get>
json min_max(const Range& range, Get get) {
  if (range.empty()) return nullptr;
  double lo = get(range.front()), hi = lo;
  for (const auto& item : range) {
    lo = std::min(lo, get(item));
    hi = std::max(hi, get(item));
  }
  return {{"min", lo}, {"max", hi}};
}

json model_summary(const config::RunConfig& config, const library::ChainParameters& p) {
  const auto end_name = [](library::EndCondition e) {
    return e == library::EndCondition::kFree ? "free" : "fixed";
  };
  std::size_t harmonic = 0, contact = 0, impulse = 0, modified_sine = 0;
  std::size_t forced = 0;
  for (const auto& f : p.forces) {
    harmonic += f.harmonic.size();
    contact += f.contact.size();
    impulse += f.impulse.size();
    modified_sine += f.modified_sine.size();
    forced += f.empty() ? 0 : 1;
  }
  const auto identity = [](double v) { return v; };
  return {
      {"type", "chain"},
      {"masses", p.size()},
      {"seed", config.chain.seed},
      {"left_end", end_name(config.chain.left)},
      {"right_end", end_name(config.chain.right)},
      {"mass", min_max(p.mass, identity)},
      {"element",
       {{"c", min_max(p.element, [](const auto& e) { return e.c; })},
        {"d", min_max(p.element, [](const auto& e) { return e.d; })},
        {"C", min_max(p.element, [](const auto& e) { return e.C; })},
        {"D", min_max(p.element, [](const auto& e) { return e.D; })},
        {"ex", min_max(p.element, [](const auto& e) { return e.ex; })},
        {"ev", min_max(p.element, [](const auto& e) { return e.ev; })}}},
      {"forces",
       {{"forced_masses", forced},
        {"harmonic", harmonic},
        {"contact", contact},
        {"impulse", impulse},
        {"modified_sine", modified_sine}}},
      {"x0", min_max(p.x0, identity)},
      {"v0", min_max(p.v0, identity)},
  };
}

// The metadata's model: the chain's summary (a description lowered from the chain syntax) or the
// described subsystems.
json model_json(const config::RunConfig& config, const system::SystemDescription& d) {
  if (d.chain) return model_summary(config, *d.chain->params);
  json subsystems = json::array();
  for (const auto& s : d.subsystems) {
    subsystems.push_back({{"name", s.name}, {"model", library::describe(s.model)}});
  }
  return {{"type", "system"}, {"subsystems", subsystems}};
}

json partition_json(const system::SystemDescription& d, std::size_t coupling_variables) {
  if (const auto& chain = d.chain) {
    return {{"subsystems", d.subsystems.size()},
            {"boundaries", chain->boundaries},
            {"coupling_bodies", chain->coupling_bodies()}};
  }
  return {{"subsystems", d.subsystems.size()}, {"coupling_variables", coupling_variables}};
}

// Fills a result row from the model's state z at time t, with the equations in force there (the
// model's own, or those of its current mode: model/events.hpp).
using RowFill = std::function<void(const model::Subsystem& equations, double t,
                                   std::span<const double> z, std::vector<double>& row)>;

std::string micro_steps(const ida::Integrator& integrator) {
  return fmt::format("{} micro steps", integrator.total_stats().steps);
}

// The times of the result rows (the output_interval grid to the stop time, or the times of
// --at), after checking the options that shape them; SetupError names the option.
std::vector<double> output_points(const config::RunConfig& config, const MonolithicOptions& options,
                                  double& end_time) {
  const double interval = config.simulation.output_interval;
  if (options.reference && options.rtol) {
    throw SetupError("--rtol does not apply to a reference run (its tolerances are fixed)");
  }
  if (options.rtol && !(*options.rtol > 0.0 && *options.rtol < 1.0)) {
    throw SetupError(fmt::format("--rtol must be in (0, 1) (got {})", *options.rtol));
  }
  check_stop_time(options.stop_time);
  std::vector<double> times;
  if (!options.times.empty()) {
    // The rows of another result (its macro points): 0, then every time after it.
    if (options.stop_time) {
      throw SetupError("--stop-time and --at exclude each other (--at ends at its last time)");
    }
    times.push_back(0.0);
    for (double t : options.times) {
      if (!(t >= 0.0) || !std::isfinite(t)) {
        throw SetupError(fmt::format("the times to write at must be finite and >= 0 (got {})", t));
      }
      if (!(t >= times.back())) {
        throw SetupError(fmt::format("the times to write at must not decrease (got {} after {})", t,
                                     times.back()));
      }
      if (t > times.back()) times.push_back(t);
    }
    if (times.size() < 2) throw SetupError("the times to write at end at t = 0");
    if (static_cast<double>(times.size()) > config::kMaxOutputRows) {
      throw SetupError(
          fmt::format("{} times to write at; at most {}", times.size(), config::kMaxOutputRows));
    }
    end_time = times.back();
  } else {
    end_time = options.stop_time.value_or(config.simulation.end_time);
    if (std::ceil(end_time / interval) + 1 > config::kMaxOutputRows) {
      throw SetupError(fmt::format("--stop-time {} with output_interval {} gives more than {} rows",
                                   end_time, interval, config::kMaxOutputRows));
    }
    times = output_times(end_time, interval);
  }
  return times;
}

// The metadata known before the integration starts.
json monolithic_metadata(const config::RunConfig& config, const MonolithicOptions& options,
                         const json& model, const json& partition, std::size_t output_points,
                         bool all_states, const MonolithicResult& result) {
  const double interval = config.simulation.output_interval;
  json meta = {
      {"command", options.command_line},
      {"mode", config::to_string(result_kind(options))},
      {"started_at", output::utc_timestamp()},
      {"config", config_json(config)},
      {"description", config.description},
      {"model", model},
      {"partition", partition},
      {"solver",
       {{"integrator", "IDA"},
        {"rtol", result.solver.rtol},
        {"atol_pos", result.solver.atol_pos},
        {"atol_vel", result.solver.atol_vel},
        {"linear_solver",
         result.solver.linear_solver == ida::LinearSolver::kDense ? "dense" : "klu"},
        {"max_order", result.solver.max_order},
        {"max_steps_per_output_interval", result.solver.max_steps}}},
      {"simulation",
       {{"start_time", 0.0},
        {"end_time", result.end_time},
        {"output_interval", options.times.empty() ? json(interval) : json(nullptr)},
        {"output_points", output_points},
        {"output_times", options.times.empty() ? "grid" : "given"}}},
      {"output",
       {{"file", result.csv_path}, {"columns", result.columns.size()}, {"all_states", all_states}}},
  };
  auto versions = output::build_info();
  versions["sundials"] = SUNDIALS_VERSION;
  meta["versions"] = versions;
  return meta;
}

// Integrates `model` over `times`, writing the row fill() makes of each state to `files`, and
// finishes the metadata (statistics, status, times) in `meta` and `result`. On an IDA failure or
// an interrupt the rows so far stay written, the JSON records the cause, and the error propagates.
void integrate_rows(const model::Subsystem& model, const std::vector<double>& times,
                    const RowFill& fill, const MonolithicOptions& options, ResultFiles& files,
                    json& meta, Clock::time_point start, MonolithicResult& result) {
  std::int64_t output_ns = 0;
  std::vector<double> z(model.state_size()), zp(model.state_size());
  std::vector<double> row(result.columns.size());
  output::TableWriter& csv = files.results();
  std::optional<ida::Integrator> integrator;
  const auto write_row = [&](double t) {
    const auto t0 = Clock::now();
    fill(integrator->equations(), t, z, row);
    csv.write_row(t, row);
    output_ns += ns_since(t0);
  };

  const auto finish_metadata = [&](const char* status) {
    const ida::AdvanceStats stats = integrator ? integrator->total_stats() : ida::AdvanceStats{};
    json statistics = stats_json(stats);
    const double reached = integrator ? integrator->time() : 0.0;
    statistics["mean_step"] =
        stats.steps > 0 ? json(reached / static_cast<double>(stats.steps)) : json(nullptr);
    meta["statistics"] = statistics;
    meta["status"] = status;
    meta["output"]["rows"] = csv.rows();
    result.wall_ns = ns_since(start);
    meta["time"] = {
        {"wall_ns", result.wall_ns}, {"solver_ns", stats.wall_ns}, {"output_ns", output_ns}};
    result.stats = stats;
    result.rows = csv.rows();
  };

  ProgressLine progress(options.progress, result.end_time);
  try {
    integrator.emplace(model, result.solver);
    integrator->state(z, zp);
    write_row(integrator->time());
    for (std::size_t k = 1; k < times.size(); ++k) {
      integrator->advance_to(times[k]);
      integrator->state(z, zp);
      write_row(times[k]);
      progress.update(times[k], [&] { return micro_steps(*integrator); });
      if (k + 1 < times.size()) check_stop(options.stop, times[k]);
    }
    progress.finish(integrator->time(), [&] { return micro_steps(*integrator); });
  } catch (const ida::ModelTerminated& e) {
    // The model ended the simulation: the rows up to the last output time are complete.
    progress.finish(integrator->time(), [&] { return micro_steps(*integrator); });
    files.close_tables();
    finish_metadata("terminated");
    meta["termination"] = {{"time", e.time()}, {"message", e.what()}};
    files.write_metadata(meta);
    result.terminated = terminated_message(e);
    result.final_values = row;
    return;
  } catch (const ida::IntegrationError& e) {
    if (integrator) progress.finish(integrator->time(), [&] { return micro_steps(*integrator); });
    files.close_tables();
    finish_metadata("failed");
    meta["error"] = {{"time", e.time()}, {"ida_flag", e.ida_flag()}, {"message", e.what()}};
    files.write_metadata(meta);
    throw;
  } catch (const RunInterrupted& e) {
    progress.finish(integrator->time(), [&] { return micro_steps(*integrator); });
    files.close_tables();
    finish_metadata("interrupted");
    meta["error"] = interrupted_json(e);
    files.write_metadata(meta);
    throw;
  } catch (const output::OutputError& e) {  // the CSV cannot be written (a full disk)
    try {
      files.close_tables();
    } catch (const output::OutputError&) {
      // The write error above is the one to report.
    }
    finish_metadata("failed");
    meta["error"] = {{"cause", "output"}, {"message", e.what()}};
    files.write_metadata_after_failure(meta);
    throw;
  }
  files.close_tables();
  finish_metadata("completed");
  result.final_values = row;
  files.write_metadata(meta);
}

// The monolithic run of a description without an uncut model: its CoupledSystem assembled into
// one IDA system (system::MonolithicSystem, METHODS §1.1 Eq. 2.4). Columns as the
// co-simulation's (cosimulation.hpp): every output "<subsystem>.<output>" (all_states: every
// state "<subsystem>.<state>"), then the coupling variables, which are unknowns of the assembled
// DAE.
void assembled_monolithic(const config::RunConfig& config, const MonolithicOptions& options,
                          const std::vector<double>& times, Clock::time_point start,
                          MonolithicResult& result) {
  const system::SystemDescription& d = *config.system_description;
  check_memory(config, 1);
  const system::CoupledSystem coupled = system::build_system(d);
  for (std::size_t L = 0; L < coupled.subsystem_count(); ++L) {
    const model::Events* events = coupled.subsystem(L).events();
    if (events != nullptr && events->advances_itself()) {
      throw SetupError(fmt::format(
          "{}: subsystem \"{}\" advances itself (a Co-Simulation FMU): it has no equations for "
          "one IDA, so neither --monolithic nor reference can run this system (compare with a "
          "co-simulation at a smaller step size instead)",
          config.path, d.subsystems[L].name));
    }
  }
  if (coupled.depends_on_macro_grid()) {
    throw SetupError(fmt::format(
        "{}: a coupling law of this system is defined on the macro-step grid (a hydraulic_node "
        "with bulk_modulus = \"stepped\"), which one IDA does not have: neither --monolithic nor "
        "reference can run it (use bulk_modulus = \"pressure_dependent\" for the reference)",
        config.path));
  }
  const system::MonolithicSystem whole(coupled);
  const bool all_states = options.all_states || config.output.all_states;
  // Indices into the states (all_states) or the outputs of the assembled system; an output name
  // that a model repeats (both ends of a one-inertia drive train are "phi_1") is written once.
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < coupled.subsystem_count(); ++i) {
    const model::Subsystem& sub = coupled.subsystem(i);
    if (all_states) {
      const auto units = model::state_units(sub);
      result.units.insert(result.units.end(), units.begin(), units.end());
      for (std::size_t j = 0; j < sub.state_size(); ++j) {
        result.descriptions.push_back(sub.state_description(j));
        result.columns.push_back(system::variable_name(d, i, sub.state_name(j)));
        picked.push_back(whole.state_offset(i) + j);
      }
      continue;
    }
    for (std::size_t o : system::distinct_outputs(sub)) {
      result.columns.push_back(system::variable_name(d, i, sub.output_name(o)));
      result.units.push_back(sub.output_unit(o));
      result.descriptions.push_back(sub.output_description(o));
      picked.push_back(whole.output_offset(i) + o);
    }
  }
  for (std::size_t c = 0; c < coupled.coupling_count(); ++c) {
    result.columns.push_back(coupled.coupling_name(c));
    result.units.push_back(coupled.coupling_unit(c));
    result.descriptions.push_back(coupled.coupling_description(c));
  }

  ResultFiles files({&config, result_kind(options), options.output_file, result.columns, 0,
                     SchemeColumns::kNone, nullptr, false, result.units, result.descriptions,
                     options.replace_files});
  files.open();
  result.csv_path = files.result_path();
  result.json_path = files.json_path();
  json meta = monolithic_metadata(config, options, model_json(config, d),
                                  partition_json(d, coupled.coupling_count()), times.size(),
                                  all_states, result);

  std::vector<double> y(whole.output_size());
  const auto fill = [&](const model::Subsystem& equations, double t, std::span<const double> z,
                        std::vector<double>& row) {
    if (!all_states) equations.outputs(t, z, {}, y);
    const std::span<const double> source = all_states ? z : std::span<const double>(y);
    for (std::size_t j = 0; j < picked.size(); ++j) row[j] = source[picked[j]];
    for (std::size_t c = 0; c < coupled.coupling_count(); ++c) {
      row[picked.size() + c] = z[whole.coupling_offset() + c];
    }
  };
  integrate_rows(whole, times, fill, options, files, meta, start, result);
}

// The monolithic run of a description with an uncut model (SystemDescription::whole, the
// chain): that model in one IDA, the honest baseline of the same equations without the cuts.
// Columns: the states the connections read, once per name, in connection order (all_states, or
// no connection: every state of the uncut model); then the coupling variables, each evaluated by
// its connection's law from the uncut model's states (system::UncutSystem).
void uncut_monolithic(const config::RunConfig& config, const MonolithicOptions& options,
                      const std::vector<double>& times, Clock::time_point start,
                      MonolithicResult& result) {
  const system::SystemDescription& d = *config.system_description;
  check_memory(config, 1);
  const system::UncutSystem uncut(d);
  const model::Subsystem& model = uncut.model();
  const bool all_states =
      options.all_states || config.output.all_states || uncut.read_names().empty();
  std::vector<std::size_t> state_index;
  if (all_states) {
    result.units = macrostep::model::state_units(model);
    for (std::size_t j = 0; j < model.state_size(); ++j) {
      result.descriptions.push_back(model.state_description(j));
      state_index.push_back(j);
      result.columns.push_back(model.state_name(j));
    }
  } else {
    state_index = uncut.read_states();
    result.columns = uncut.read_names();
    result.units = uncut.read_units();
    result.descriptions = uncut.read_descriptions();
  }
  const auto& couplings = uncut.coupling_names();
  result.columns.insert(result.columns.end(), couplings.begin(), couplings.end());
  const auto& coupling_units = uncut.coupling_units();
  result.units.insert(result.units.end(), coupling_units.begin(), coupling_units.end());
  const auto& coupling_descriptions = uncut.coupling_descriptions();
  result.descriptions.insert(result.descriptions.end(), coupling_descriptions.begin(),
                             coupling_descriptions.end());

  ResultFiles files({&config, result_kind(options), options.output_file, result.columns, 0,
                     SchemeColumns::kNone, nullptr, false, result.units, result.descriptions,
                     options.replace_files});
  files.open();
  result.csv_path = files.result_path();
  result.json_path = files.json_path();
  json meta =
      monolithic_metadata(config, options, model_json(config, d),
                          partition_json(d, couplings.size()), times.size(), all_states, result);

  std::vector<double> u(couplings.size());
  const auto fill = [&](const model::Subsystem&, double, std::span<const double> z,
                        std::vector<double>& row) {
    for (std::size_t j = 0; j < state_index.size(); ++j) row[j] = z[state_index[j]];
    uncut.evaluate_couplings(z, u);
    std::copy(u.begin(), u.end(), row.begin() + static_cast<std::ptrdiff_t>(state_index.size()));
  };
  integrate_rows(model, times, fill, options, files, meta, start, result);
}

}  // namespace

void check_stop_time(const std::optional<double>& stop_time) {
  if (stop_time && !(*stop_time >= config::kMinEndTime && std::isfinite(*stop_time))) {
    throw SetupError(
        fmt::format("--stop-time must be a number of seconds of at least {:g} (got {})",
                    config::kMinEndTime, *stop_time));
  }
}

ida::IntegratorOptions integrator_options(const config::SolverConfig& s) {
  ida::IntegratorOptions o;
  o.rtol = s.rtol;
  o.atol_pos = s.effective_atol_pos();
  o.atol_vel = s.effective_atol_vel();
  o.linear_solver = s.linear_solver;
  o.max_order = s.max_order;
  o.max_steps = s.max_steps;
  o.stop_adjustment = s.micro_step_stop == config::MicroStepStop::kAdjust;
  o.overshoot = s.micro_step_stop == config::MicroStepStop::kOvershoot;
  return o;
}

MonolithicResult run_monolithic(const config::RunConfig& config, const MonolithicOptions& options) {
  const auto start = Clock::now();
  MonolithicResult result;

  // ---- setup: everything that can be the user's fault happens before integration ----
  const std::vector<double> times = output_points(config, options, result.end_time);
  result.solver = solver_options(config, options);
  // The uncut model where the description has one, else the assembled system.
  if (config.system_description->whole) {
    uncut_monolithic(config, options, times, start, result);
  } else {
    assembled_monolithic(config, options, times, start, result);
  }
  return result;
}

void print_summary(std::ostream& out, const config::RunConfig& config,
                   const MonolithicOptions& options, const MonolithicResult& r) {
  const auto s = config::subsystem_count(config);
  if (!r.terminated.empty()) fmt::print(out, "{}\n", r.terminated);
  if (const auto& chain = config.system_description->chain) {
    fmt::print(out, "{} run of {}: chain of {} masses ({} subsystem{}), t = 0 .. {} s\n",
               config::to_string(result_kind(options)), config.path, chain->masses(), s,
               s == 1 ? "" : "s", r.end_time);
  } else {
    fmt::print(out, "{} run of {}: {} subsystem{} in one system, t = 0 .. {} s\n",
               config::to_string(result_kind(options)), config.path, s, s == 1 ? "" : "s",
               r.end_time);
  }
  fmt::print(out, "solver: IDA, rtol {}, atol_pos {}, atol_vel {}, {}, max order {}\n",
             r.solver.rtol, r.solver.atol_pos, r.solver.atol_vel,
             r.solver.linear_solver == ida::LinearSolver::kDense ? "dense LU" : "KLU",
             r.solver.max_order);
  const std::size_t shown = std::min<std::size_t>(r.columns.size(), 6);
  fmt::print(out, "final values at t = {} s ({} of {} columns):\n", r.end_time, shown,
             r.columns.size());
  for (std::size_t j = 0; j < shown; ++j) {
    fmt::print(out, "  {:>10} = {:.10g}\n", r.columns[j], r.final_values[j]);
  }
  const ida::AdvanceStats& st = r.stats;
  fmt::print(out,
             "micro steps {} (mean {:.4g} s), residual evals {}, Jacobian evals {}, nonlinear "
             "iterations {}, nonlinear failures {}, error-test failures {}\n",
             st.steps, st.steps > 0 ? r.end_time / static_cast<double>(st.steps) : 0.0,
             st.residual_evals, st.jacobian_evals, st.nonlinear_iterations, st.nonlinear_failures,
             st.error_test_failures);
  fmt::print(out, "wall time {:.3f} s (integration {:.3f} s)\n",
             1e-9 * static_cast<double>(r.wall_ns), 1e-9 * static_cast<double>(st.wall_ns));
  fmt::print(out, "wrote {} ({} rows x {} columns + time){}\n", r.csv_path, r.rows,
             r.columns.size(), r.json_path.empty() ? std::string() : " and " + r.json_path);
}

}  // namespace macrostep::run
