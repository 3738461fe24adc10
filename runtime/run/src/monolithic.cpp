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
#include <set>
#include <unordered_map>

#include "elapsed.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/system/monolithic_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "memory_estimate.hpp"
#include "progress_line.hpp"
#include "result_files.hpp"
#include "run_json.hpp"

namespace macrostep::run {

namespace {

using json = nlohmann::ordered_json;

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

// Fills a result row from the model's state z at time t.
using RowFill = std::function<void(double t, std::span<const double> z, std::vector<double>& row)>;

// A cut element of the partition: its law and the state indices of the bodies it joins.
struct CutElement {
  library::ElementLaw law;
  std::size_t x_left, v_left, x_right, v_right;
};

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
      if (!(t >= times.back()) || !std::isfinite(t)) {
        throw SetupError(fmt::format(
            "the times to write at must be finite, >= 0 and increasing (got {} after {})", t,
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

void monolithic_columns(const library::ChainSegment& chain, const library::ChainParameters& params,
                        const std::vector<std::size_t>& bodies, bool all_states,
                        std::vector<std::string>& columns, std::vector<std::size_t>& state_index,
                        std::vector<CutElement>& cuts) {
  // Columns: coupling-body states by default (DESIGN.md column naming), looked up by the
  // model's own state names so that the CSV never depends on the state layout.
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < chain.state_size(); ++i) by_name.emplace(chain.state_name(i), i);
  const auto index_of = [&](const std::string& name) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) throw std::logic_error("chain model has no state named " + name);
    return it->second;
  };
  if (all_states) {
    for (std::size_t i = 0; i < chain.state_size(); ++i) {
      state_index.push_back(i);
      columns.push_back(chain.state_name(i));
    }
  } else {
    std::set<std::size_t> written;  // a subsystem of one mass: its body is next to two cuts
    for (std::size_t body : bodies) {
      if (!written.insert(body).second) continue;
      for (const char* quantity : {"x", "v"}) {
        const std::string name = fmt::format("{}_{}", quantity, body);
        state_index.push_back(index_of(name));
        columns.push_back(name);
      }
    }
  }
  // The coupling variables of the partition, evaluated from the states with the cut
  // element's law (as the co-simulation's master does), so that both runs compare column by
  // column: lambda_L = F_SD(x_{b+1} - x_b, v_{b+1} - v_b), b = last body of subsystem L.
  for (std::size_t k = 0; k + 1 < bodies.size(); k += 2) {
    const std::size_t left = bodies[k], right = bodies[k + 1];
    cuts.push_back({params.element[left], index_of(fmt::format("x_{}", left)),
                    index_of(fmt::format("v_{}", left)), index_of(fmt::format("x_{}", right)),
                    index_of(fmt::format("v_{}", right))});
    columns.push_back(fmt::format("lambda_{}", cuts.size()));
  }
}

// The metadata known before the integration starts.
json monolithic_metadata(const config::RunConfig& config, const MonolithicOptions& options,
                         const json& model, const json& partition, std::size_t output_points,
                         bool all_states, const MonolithicResult& result) {
  const double interval = config.simulation.output_interval;
  json meta = {
      {"command", options.command_line},
      {"mode", options.reference ? "reference" : "monolithic"},
      {"started_at", output::utc_timestamp()},
      {"config", {{"path", config.path}, {"text", config.text}}},
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
  const auto write_row = [&](double t) {
    const auto t0 = Clock::now();
    fill(t, z, row);
    csv.write_row(t, row);
    output_ns += ns_since(t0);
  };

  std::optional<ida::Integrator> integrator;
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

// The monolithic run of a [[subsystem]] description: its CoupledSystem assembled into one IDA
// system (system::MonolithicSystem, METHODS §1.1 Eq. 2.4). Columns as the co-simulation's
// (cosimulation.hpp): every output "<subsystem>.<output>" (all_states: every state
// "<subsystem>.<state>"), then the coupling variables, which are unknowns of the assembled DAE.
void described_monolithic(const config::RunConfig& config, const MonolithicOptions& options,
                          const std::vector<double>& times, Clock::time_point start,
                          MonolithicResult& result) {
  const system::SystemDescription& d = *config.system_description;
  const system::CoupledSystem coupled = system::build_system(d);
  const system::MonolithicSystem whole(coupled);
  const bool all_states = options.all_states || config.output.all_states;
  // Indices into the states (all_states) or the outputs of the assembled system; an output name
  // that a model repeats (both ends of a one-inertia drive train are "phi_1") is written once.
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < coupled.subsystem_count(); ++i) {
    const model::Subsystem& sub = coupled.subsystem(i);
    if (all_states) {
      for (std::size_t j = 0; j < sub.state_size(); ++j) {
        result.columns.push_back(d.subsystems[i].name + "." + sub.state_name(j));
        picked.push_back(whole.state_offset(i) + j);
      }
      continue;
    }
    for (std::size_t o : system::distinct_outputs(sub)) {
      result.columns.push_back(d.subsystems[i].name + "." + sub.output_name(o));
      picked.push_back(whole.output_offset(i) + o);
    }
  }
  for (std::size_t c = 0; c < coupled.coupling_count(); ++c) {
    result.columns.push_back(coupled.coupling_name(c));
  }

  ResultFiles files({&config, options.reference, options.output_file, result.columns});
  result.csv_path = files.result_path();
  result.json_path = files.json_path();
  json subsystems = json::array();
  for (const auto& s : d.subsystems) {
    subsystems.push_back({{"name", s.name}, {"model", library::describe(s.model)}});
  }
  const json model = {{"type", "system"}, {"subsystems", subsystems}};
  const json partition = {{"subsystems", coupled.subsystem_count()},
                          {"coupling_variables", coupled.coupling_count()}};
  json meta =
      monolithic_metadata(config, options, model, partition, times.size(), all_states, result);

  std::vector<double> y(whole.output_size());
  const auto fill = [&](double t, std::span<const double> z, std::vector<double>& row) {
    if (!all_states) whole.outputs(t, z, {}, y);
    const std::span<const double> source = all_states ? z : std::span<const double>(y);
    for (std::size_t j = 0; j < picked.size(); ++j) row[j] = source[picked[j]];
    for (std::size_t c = 0; c < coupled.coupling_count(); ++c) {
      row[picked.size() + c] = z[whole.coupling_offset() + c];
    }
  };
  integrate_rows(whole, times, fill, options, files, meta, start, result);
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
  o.linear_solver = s.linear_solver == config::LinearSolverKind::kDense ? ida::LinearSolver::kDense
                                                                        : ida::LinearSolver::kKlu;
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
  if (config.system_description) {
    described_monolithic(config, options, times, start, result);
    return result;
  }

  check_memory(config, 1);
  const library::ChainParameters params = config::realize_chain(config);
  const library::ChainSegment chain(params, 0, params.size());

  const auto bodies = config.partition.coupling_bodies();
  const bool all_states = options.all_states || config.output.all_states || bodies.empty();
  std::vector<std::size_t> state_index;
  std::vector<CutElement> cuts;
  monolithic_columns(chain, params, bodies, all_states, result.columns, state_index, cuts);

  ResultFiles files({&config, options.reference, options.output_file, result.columns});
  result.csv_path = files.result_path();
  result.json_path = files.json_path();

  const json partition = {{"subsystems", config.partition.subsystems()},
                          {"boundaries", config.partition.boundaries},
                          {"coupling_bodies", bodies}};
  json meta = monolithic_metadata(config, options, model_summary(config, params), partition,
                                  times.size(), all_states, result);

  const auto fill = [&](double, std::span<const double> z, std::vector<double>& row) {
    for (std::size_t j = 0; j < state_index.size(); ++j) row[j] = z[state_index[j]];
    for (std::size_t c = 0; c < cuts.size(); ++c) {
      const CutElement& e = cuts[c];
      row[state_index.size() + c] =
          e.law.force(z[e.x_right] - z[e.x_left], z[e.v_right] - z[e.v_left]);
    }
  };
  integrate_rows(chain, times, fill, options, files, meta, start, result);
  return result;
}

void print_summary(std::ostream& out, const config::RunConfig& config,
                   const MonolithicOptions& options, const MonolithicResult& r) {
  const auto s = config::subsystem_count(config);
  if (config.system_description) {
    fmt::print(out, "{} run of {}: {} subsystem{} in one system, t = 0 .. {} s\n",
               options.reference ? "reference" : "monolithic", config.path, s, s == 1 ? "" : "s",
               r.end_time);
  } else {
    fmt::print(out, "{} run of {}: chain of {} masses ({} subsystem{}), t = 0 .. {} s\n",
               options.reference ? "reference" : "monolithic", config.path, config.chain.masses, s,
               s == 1 ? "" : "s", r.end_time);
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
