// The metadata of a co-simulation run (run_metadata.hpp).
#include "run_metadata.hpp"

#include <sundials/sundials_config.h>

#include <cmath>
#include <string>

#include "elapsed.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/system/system_description.hpp"
#include "run_json.hpp"

namespace macrostep::run {

using json = nlohmann::ordered_json;

namespace {

// The time breakdown of seed 000 §4.4 / Eq. 4.5 as written to the metadata.
nlohmann::ordered_json time_breakdown_json(const schemes::TimeBreakdown& t, std::int64_t wall_ns) {
  return {
      {"solver_s", seconds(t.solver_ns)},
      {"idle_s", seconds(t.idle_ns)},
      {"extra_runs_s", seconds(t.extra_runs_ns)},
      {"interface_s", seconds(t.interface_ns)},
      {"snapshot_s", seconds(t.snapshot_ns)},
      {"executor_s", seconds(t.executor_ns)},
      {"communication_s", seconds(t.communication_ns)},
      {"output_s", seconds(t.observer_ns)},
      {"total_s", seconds(t.total_ns)},
      {"wall_s", seconds(wall_ns)},
  };
}

json cosim_json(const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const bool fixed = c.fixed_step();
  json j = {
      {"scheme", config::to_string(c.scheme)},
      {"estimator", control::to_string(c.estimator)},
      {"method", fixed ? (c.iterative() ? "fixed H" : "exH") : control::to_string(c.estimator)},
      {"step_size_mode", fixed ? "fixed" : "variable"},
      {fixed ? "step_size" : "initial_step_size", m.h},
      {"order", order_text(c.effective_order())},
  };
  if (const auto& gs = s.scheme.gauss_seidel) {
    json sequence = json::array();  // 1-based, as in the file
    for (const std::size_t i : gs->sequence) sequence.push_back(i + 1);
    j["sequence"] = gs->sequence.empty() ? json("index order") : sequence;
    j["gauss_seidel"] = config::to_string(c.gauss_seidel);  // the end value (gauss_seidel.hpp)
    j["settle_tolerance"] = gs->tolerance;                  // of the rtol/atol_u weights below
    j["rtol"] = m.tolerances.rtol;
    j["atol_u"] = m.tolerances.atol_u;
  }
  if (c.iterative()) {
    j["jacobian"] = c.scheme == config::CosimScheme::kWaveform ? json(nullptr) : json(c.jacobian);
    j["tau"] = c.tau;
    j["max_corrector_passes"] = c.max_corrector_passes;
    j["perturbation_min"] = c.perturbation_min;
    if (c.scheme == config::CosimScheme::kWaveform) j["omega"] = c.omega;
    if (c.scheme == config::CosimScheme::kImplicit || c.scheme == config::CosimScheme::kAuto) {
      j["final_pass"] = c.final_pass.value();  // D-50, resolved by the settings
    }
    if (fixed) {  // the corrector's convergence weights
      j["rtol"] = m.tolerances.rtol;
      j["atol_u"] = m.tolerances.atol_u;
    }
  }
  if (fixed) {
    j["kappa"] = m.kappa_fixed;
  } else {
    j["order_strategy"] = control::to_string(
        c.effective_order().automatic ? c.order_strategy : control::OrderStrategy::kFixed);
    j["kappa_max"] = m.order.kappa_max;
    j["rtol"] = m.tolerances.rtol;
    j["atol_pos"] = m.tolerances.atol_pos;
    j["atol_vel"] = m.tolerances.atol_vel;
    j["atol_u"] = m.tolerances.atol_u;
    j["safety"] = m.step.safety;
    j["r_min"] = m.step.r_min;
    j["r_max"] = m.step.r_max;
    j["dead_zone"] = m.step.dead_zone;
    j["h_max"] = std::isfinite(m.step.h_max) ? json(m.step.h_max) : json(nullptr);
  }
  if (c.explicit_state_estimates()) j["prediction_ratio_limit"] = c.prediction_ratio_limit;
  j["predictor"] = config::to_string(c.predictor);
  if (c.predictor == config::PredictorKind::kLeastSquares) {
    j["least_squares_points"] = c.least_squares_points;
  }
  // Only when not the default, so that the metadata of Lagrange runs stays as it was.
  if (!c.approximation.is_lagrange()) j["approximation"] = c.approximation.name;
  for (std::size_t k = 0; k < s.connection_approximations.size(); ++k) {
    if (!s.connection_approximations[k].empty()) {
      j["connection_approximations"][std::to_string(k + 1)] = s.connection_approximations[k];
    }
  }
  if (c.jump_handling) j["jump_handling"] = runner::to_string(*c.jump_handling);
  if (c.min_micro_steps) j["min_micro_steps"] = *c.min_micro_steps;
  j["output_every"] = c.output_every;
  j["executor"] = config::to_string(c.executor);
  j["threads"] = s.executor.threads;
  if (c.executor == config::ExecutorKind::kProcesses) {
    j["master_hosts_first"] = s.master_hosts_first;
    j["max_restarts"] = s.max_restarts;
  }
  j["rollback"] = s.executor.rollback;
  return j;
}

// The metadata's model: the chain's size and seed (a description lowered from the chain
// syntax), or the described subsystems and connections.
json model_json(const system::SystemDescription& d) {
  if (const auto& chain = d.chain) {
    return {{"type", "chain"}, {"masses", chain->masses()}, {"seed", chain->seed}};
  }
  json subsystems = json::array(), connections = json::array();
  for (const auto& s : d.subsystems) {
    subsystems.push_back({{"name", s.name}, {"model", library::describe(s.model)}});
  }
  for (const auto& c : d.connections) {
    connections.push_back({{"name", c.name}, {"variables", system::coupling_names(c)}});
  }
  return {{"type", "system"}, {"subsystems", subsystems}, {"connections", connections}};
}

json partition_json(const system::SystemDescription& d, const system::CoupledSystem& system) {
  json j = {{"subsystems", system.subsystem_count()}};
  if (const auto& chain = d.chain) {
    j["boundaries"] = chain->boundaries;
    j["coupling_bodies"] = chain->coupling_bodies();
  }
  j["coupling_variables"] = system.coupling_count();
  return j;
}

// How the statistics name subsystem i: its masses (a lowered chain) or its name.
void label_subsystem(const system::SystemDescription& d, std::size_t i, json& sub) {
  if (const auto& chain = d.chain) {
    sub["masses"] = {chain->boundaries[i] + 1, chain->boundaries[i + 1]};
  } else {
    sub["name"] = d.subsystems[i].name;
  }
}

// The IDA settings of the subsystems (metadata "solver").
json solver_json(const ida::IntegratorOptions& solver) {
  return {{"integrator", "IDA"},
          {"rtol", solver.rtol},
          {"atol_pos", solver.atol_pos},
          {"atol_vel", solver.atol_vel},
          {"linear_solver", solver.linear_solver == ida::LinearSolver::kDense ? "dense" : "klu"},
          {"max_order", solver.max_order},
          {"max_steps_per_macro_step", solver.max_steps}};
}

// The statistics of the run so far (also of a failed one): steps, order histogram, work per
// subsystem (when the executor exists).
json step_statistics(const RunTally& counts, const executors::Executor* executor,
                     const config::RunConfig& config) {
  const double reached = counts.reached;
  json statistics;
  statistics["macro_steps"] = counts.accepted;
  statistics["rejected"] = counts.rejected;
  statistics["failed_step_ratio"] =
      counts.accepted > 0
          ? json(static_cast<double>(counts.rejected) / static_cast<double>(counts.accepted))
          : json(nullptr);
  json histogram = json::array();
  for (int k = 0; k <= control::kMaxKappa; ++k) {
    const auto n = counts.by_kappa[static_cast<std::size_t>(k)];
    const double h = counts.time_by_kappa[static_cast<std::size_t>(k)];
    histogram.push_back(
        {{"kappa", k},
         {"steps", n},
         {"step_share", counts.accepted > 0
                            ? static_cast<double>(n) / static_cast<double>(counts.accepted)
                            : 0.0},
         {"time_share", reached > 0.0 ? h / reached : 0.0}});
  }
  statistics["order_histogram"] = histogram;
  json subsystems = json::array();
  const system::SystemDescription& d = *config.system_description;
  for (std::size_t i = 0; executor != nullptr && i < d.subsystems.size(); ++i) {
    json sub = {{"subsystem", i + 1}};
    label_subsystem(d, i, sub);
    sub.update(stats_json(executor->total_stats(i)));
    subsystems.push_back(sub);
  }
  statistics["subsystems"] = subsystems;
  return statistics;
}

// Scheme auto: its steps per scheme and its switches with their reasons (also of a failed run:
// run_scheme adds the scheme's statistics when it stops with an exception).
void add_scheme_choice(const schemes::SchemeResult& r, json& statistics) {
  const schemes::SchemeChoiceStatistics& c = r.scheme_choice;
  if (!c.used) return;
  const auto per = [](const schemes::SchemeChoiceStatistics::PerScheme& p) {
    return json{{"attempts", p.attempts},
                {"accepted", p.accepted},
                {"work", p.work},
                {"simulated_time", p.time}};
  };
  json recent = json::array();
  for (const auto& sw : c.recent) {
    recent.push_back({{"time", sw.time},
                      {"from", schemes::to_string(sw.from)},
                      {"to", schemes::to_string(sw.to)},
                      {"reason", sw.reason}});
  }
  statistics["scheme_choice"] = {
      {"explicit", per(c.explicit_steps)},
      {"semi_implicit", per(c.semi_implicit_steps)},
      {"implicit", per(c.implicit_steps)},
      {"switches", c.switches},
      {"skipped_probes", c.skipped_probes},
      {"escalated", c.escalated},
      {"recent_switches", recent},
      {"only", c.only_reason.empty() ? json(nullptr) : json(c.only_reason)}};
}

// What only a completed run reports: failures by cause, H statistics, per-subsystem solver time.
void add_completed_statistics(const schemes::SchemeResult& r, double t_end, json& statistics) {
  statistics["corrector_failures"] = r.steps.corrector_failures;
  statistics["integrations"] = {{"nominal", r.integrations.nominal},
                                {"extra", r.integrations.extra},
                                {"per_subsystem_and_step", integrations_per_step(r)}};
  if (r.corrector.attempts > 0) {
    statistics["corrector"] = {
        {"passes", r.corrector.passes},
        {"mean_passes", r.corrector.mean_passes()},
        {"max_passes", r.corrector.max_passes},
        {"jacobian_evaluations", r.corrector.jacobian_evaluations},
        {"max_iteration_residual", r.corrector.max_iteration_residual},
        {"perturbed_runs_s", 1e-9 * static_cast<double>(r.time.extra_runs_ns)},
        {"nominal_runs_s", 1e-9 * nominal_ns(r)},
    };
  }
  // Only runs whose explicit estimates were checked (exLE, exMD or auto with a limit > 0).
  if (r.estimate_raises.checked) {
    statistics["estimate_raises"] = {{"attempts", r.estimate_raises.attempts},
                                     {"max_factor", r.estimate_raises.max_factor}};
    if (r.estimate_raises.unseen > 0) {
      statistics["estimate_raises"]["unseen_misses"] = r.estimate_raises.unseen;
      statistics["estimate_raises"]["first_unseen_at"] = r.estimate_raises.first_unseen;
    }
  }
  // Only runs that evaluated outputs (a feed-through subsystem not affine in its inputs): the
  // statistics of every other run keep their keys.
  if (r.consistent_update.output_evaluations > 0) {
    const schemes::ConsistentUpdateStatistics& c = r.consistent_update;
    statistics["consistent_update"] = {{"newton_iterations", c.newton_iterations},
                                       {"output_evaluations", c.output_evaluations},
                                       {"subsystem_evaluations", c.subsystem_evaluations}};
  }
  statistics["subsystem_failures"] = r.steps.subsystem_failures;
  statistics["mean_step"] = r.steps.accepted > 0 ? json(r.mean_h()) : json(nullptr);
  statistics["step_min"] = r.steps.h_min;
  statistics["step_max"] = r.steps.h_max;
  for (std::size_t i = 0; i < r.subsystem_stats.size(); ++i) {
    auto& sub = statistics["subsystems"][i];
    const auto steps = r.subsystem_stats[i].steps;
    sub["solver_s"] = 1e-9 * r.subsystem_solver_ns[i];
    sub["mean_micro_step"] = steps > 0 ? json(t_end / static_cast<double>(steps)) : json(nullptr);
  }
}

// statistics.laws: per coupling law with histograms (CouplingLaw::histograms), its variable and
// each histogram with the accepted steps it counted and the share with at most 3 (the seed-003
// target for the hydraulic node's Newton corrections: <= 3 in >= 95 % of macro steps).
void add_law_histograms(const system::CoupledSystem& system, json& statistics) {
  json laws = json::array();
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    const auto histograms = system.law(k).histograms();
    if (histograms.empty()) continue;
    json entry = {{"variable", system.coupling_name(system.law_offset(k))}};
    for (const auto& h : histograms) {
      std::uint64_t total = 0, at_most_3 = 0;
      for (std::size_t b = 0; b < h.bins.size(); ++b) {
        total += h.bins[b];
        if (b <= 3) at_most_3 += h.bins[b];
      }
      entry[h.name] = {{"histogram", h.bins},
                       {"steps", total},
                       {"share_at_most_3", total > 0 ? json(static_cast<double>(at_most_3) /
                                                            static_cast<double>(total))
                                                     : json(nullptr)}};
    }
    laws.push_back(std::move(entry));
  }
  if (!laws.empty()) statistics["laws"] = std::move(laws);
}

}  // namespace

json run_metadata(const config::RunConfig& config, const CosimOptions& options,
                  const system::CoupledSystem& system, const CosimResult& result) {
  const CosimSettings& settings = result.settings;
  const ida::IntegratorOptions& solver = settings.executor.solver;
  json meta = {
      {"command", options.command_line},
      {"mode", config::to_string(config::ResultKind::kCosimulation)},
      {"started_at", output::utc_timestamp()},
      {"config", config_json(config)},
      {"description", config.description},
      {"model", model_json(*config.system_description)},
      {"partition", partition_json(*config.system_description, system)},
      {"cosim", cosim_json(settings)},
      {"solver", solver_json(solver)},
      {"simulation", {{"start_time", 0.0}, {"end_time", settings.end_time}}},
      {"output",
       {{"file", result.csv_path},
        {"columns", result.columns.size()},
        {"all_states", settings.all_states},
        {"output_every", settings.cosim.output_every},
        {"row_times", config::to_string(settings.rows)},
        {"output_interval", settings.executor.output_interval > 0.0
                                ? json(settings.executor.output_interval)
                                : json(nullptr)}}},
      {"steps_file", result.steps_path},
  };
  // The subsystems with solver keys of their own, each with its complete settings.
  if (!settings.executor.subsystem_solvers.empty()) {
    json own = json::array();
    for (std::size_t i = 0; i < config.subsystem_solvers.size(); ++i) {
      if (config.subsystem_solvers[i].empty()) continue;
      json entry = solver_json(settings.executor.subsystem_solvers[i]);
      entry["subsystem"] = config.system_description->subsystems[i].name;
      own.push_back(entry);
    }
    meta["solver"]["subsystems"] = own;
  }
  auto versions = output::build_info();
  versions["sundials"] = SUNDIALS_VERSION;
  meta["versions"] = versions;
  return meta;
}

double nominal_ns(const schemes::SchemeResult& r) {
  double ns = 0.0;
  for (double t : r.subsystem_solver_ns) ns += t;
  return ns;
}

double integrations_per_step(const schemes::SchemeResult& r) {
  const double steps =
      static_cast<double>(r.steps.accepted) * static_cast<double>(r.subsystem_stats.size());
  if (!(steps > 0.0)) return 0.0;
  return static_cast<double>(r.integrations.nominal + r.integrations.extra) / steps;
}

json failure_json(const std::exception& e) {
  if (const auto* interrupted = dynamic_cast<const RunInterrupted*>(&e)) {
    return interrupted_json(*interrupted);
  }
  if (const auto* w = dynamic_cast<const executors::WorkerFailure*>(&e)) {
    return {{"cause", "worker"},
            {"subsystem", w->subsystem() + 1},
            {"macro_step", w->macro_step()},
            {"time", w->time()},
            {"message", e.what()}};
  }
  if (const auto* f = dynamic_cast<const schemes::SubsystemFailure*>(&e)) {
    return {{"cause", "subsystem"},
            {"subsystem", f->subsystem() + 1},
            {"time", f->time()},
            {"message", e.what()}};
  }
  if (const auto* u = dynamic_cast<const control::StepSizeUnderflow*>(&e)) {
    return {{"cause", "step_size_underflow"},
            {"time", u->time()},
            {"step_size", u->step()},
            {"minimum", u->minimum()},
            {"message", e.what()}};
  }
  if (const auto* g = dynamic_cast<const ida::IntegrationError*>(&e)) {
    return {{"cause", "integration"},
            {"time", g->time()},
            {"ida_flag", g->ida_flag()},
            {"message", e.what()}};
  }
  if (dynamic_cast<const output::OutputError*>(&e) != nullptr) {
    return {{"cause", "output"}, {"message", e.what()}};
  }
  return {{"cause", "error"}, {"message", e.what()}};
}

std::string MetadataWriter::crash_document() const {
  json meta = meta_;
  meta["status"] = "failed";
  meta["error"] = {{"cause", "crash"},
                   {"message",
                    "the master process received a fatal signal during the run (a model running "
                    "in it crashed); the result file holds the rows written so far"}};
  return files_.document(meta).dump(2) + "\n";
}

std::string MetadataWriter::stopped_document() const {
  json meta = meta_;
  meta["status"] = "interrupted";
  meta["error"] = {{"cause", "interrupted"},
                   {"message",
                    "a second stop signal ended the process while a model running in the master "
                    "did not return (a hang); the result file holds the rows written so far"}};
  return files_.document(meta).dump(2) + "\n";
}

void MetadataWriter::finished(const RunEnd& end) {
  meta_["status"] = end.status;

  meta_["output"]["rows"] = result_.rows;
  meta_["simulation"]["reached_time"] = result_.final_time;
  json statistics = step_statistics(tally_, executor_, config_);
  add_scheme_choice(result_.run, statistics);
  add_law_histograms(system_, statistics);
  if (end.failure != nullptr) {
    meta_["statistics"] = std::move(statistics);
    // run_scheme filled result.run up to the failure (time breakdown included).
    meta_["time"] = time_breakdown_json(result_.run.time, result_.wall_ns);
    meta_["error"] = failure_json(*end.failure);
    files_.write_metadata_after_failure(meta_);
    return;
  }
  add_completed_statistics(result_.run, result_.settings.end_time, statistics);
  if (!result_.tolerance_above_swing.empty()) {
    // The quantities whose error no estimate sees (tolerance_check.hpp).
    auto& hidden = statistics["tolerance_above_swing"] = json::array();
    for (const ToleranceAboveSwing& f : result_.tolerance_above_swing) {
      hidden.push_back({{"variable", f.name},
                        {"key", f.key},
                        {"unit", f.unit},
                        {"atol", f.atol},
                        {"swing", f.swing},
                        {"from", f.from},
                        {"to", f.to}});
    }
  }
  meta_["statistics"] = std::move(statistics);
  meta_["time"] = time_breakdown_json(result_.run.time, result_.wall_ns);
  files_.write_metadata(meta_);
}

}  // namespace macrostep::run
