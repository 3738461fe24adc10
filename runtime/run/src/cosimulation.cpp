// The co-simulation run of `macrostep run` (cosimulation.hpp).
#include "macrostep/run/cosimulation.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sundials/sundials_config.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "elapsed.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "memory_estimate.hpp"
#include "progress_line.hpp"
#include "result_files.hpp"
#include "run_checkpoints.hpp"
#include "run_json.hpp"

namespace macrostep::run {

using namespace schemes;  // NOLINT(google-build-using-namespace): the driver runs the schemes
namespace {

using json = nlohmann::ordered_json;

// The time breakdown of seed 000 §4.4 / Eq. 4.5 as written to the metadata.
nlohmann::ordered_json time_breakdown_json(const TimeBreakdown& t, std::int64_t wall_ns) {
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

control::Estimator to_control(config::CosimEstimator e) {
  switch (e) {
    case config::CosimEstimator::kNone:
      return control::Estimator::kNone;
    case config::CosimEstimator::kExLE:
      return control::Estimator::kExLE;
    case config::CosimEstimator::kExMD:
      return control::Estimator::kExMD;
    case config::CosimEstimator::kExCV:
      return control::Estimator::kExCV;
    case config::CosimEstimator::kImMD:
      return control::Estimator::kImMD;
    case config::CosimEstimator::kImCV:
      return control::Estimator::kImCV;
  }
  return control::Estimator::kNone;
}

std::string order_text(const config::OrderSetting& o) {
  return o.automatic ? std::string("auto") : std::to_string(o.kappa);
}

json cosim_json(const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const bool fixed = c.fixed_step();
  json j = {
      {"scheme", config::to_string(c.scheme)},
      {"estimator", config::to_string(c.estimator)},
      {"method", fixed ? (c.iterative() ? "fixed H" : "exH") : config::to_string(c.estimator)},
      {"step_size_mode", fixed ? "fixed" : "variable"},
      {fixed ? "step_size" : "initial_step_size", m.h},
      {"order", order_text(c.effective_order())},
  };
  if (const auto& gs = s.scheme.gauss_seidel) {
    json sequence = json::array();  // 1-based, as in the file
    for (const std::size_t i : gs->sequence) sequence.push_back(i + 1);
    j["sequence"] = gs->sequence.empty() ? json("index order") : sequence;
    j["settle_tolerance"] = gs->tolerance;  // of the rtol/atol_u weights below
    j["rtol"] = m.tolerances.rtol;
    j["atol_u"] = m.tolerances.atol_u;
  }
  if (c.iterative()) {
    j["jacobian"] = c.scheme == config::CosimScheme::kWaveform
                        ? json(nullptr)
                        : json(config::to_string(c.jacobian));
    j["tau"] = c.tau;
    j["max_corrector_passes"] = c.max_corrector_passes;
    j["perturbation_min"] = c.perturbation_min;
    if (c.scheme == config::CosimScheme::kWaveform) j["omega"] = c.omega;
    if (fixed) {  // the corrector's convergence weights
      j["rtol"] = m.tolerances.rtol;
      j["atol_u"] = m.tolerances.atol_u;
    }
  }
  if (fixed) {
    j["kappa"] = m.kappa_fixed;
  } else {
    j["order_strategy"] =
        c.effective_order().automatic ? config::to_string(c.order_strategy) : "fixed";
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
  // Only when set, so that the metadata of runs without them stays as it was.
  if (c.jump_handling != config::JumpHandling::kKeep) {
    j["jump_handling"] = config::to_string(c.jump_handling);
  }
  if (c.min_micro_steps > 0) j["min_micro_steps"] = c.min_micro_steps;
  j["output_every"] = c.output_every;
  j["executor"] = c.executor == config::ExecutorKind::kProcesses ? "processes"
                  : c.executor == config::ExecutorKind::kMpi     ? "mpi"
                                                                 : "inprocess";
  j["threads"] = s.executor.threads;
  if (c.executor == config::ExecutorKind::kProcesses) {
    j["master_hosts_first"] = s.master_hosts_first;
    j["max_restarts"] = s.max_restarts;
  }
  j["rollback"] = s.executor.rollback;
  return j;
}

// The metadata's "error" entry: the cause of a failed run as data (DESIGN.md contract 5).
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
  if (const auto* f = dynamic_cast<const SubsystemFailure*>(&e)) {
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

// The parallel runs of one subsystem in a pass (contract 4: 1 + k PUs): the nominal run, plus
// the comparison run of exLE/exMD, or one perturbed run per input of the fd Jacobian
// (`max_inputs`: the most inputs of any subsystem; METHODS §4.1 "Cores").
std::size_t runs_per_subsystem(const CosimSettings& settings, std::size_t max_inputs) {
  const auto& corrector = settings.scheme.corrector;
  if (corrector && corrector->iteration != corrector::IterationKind::kWaveform &&
      corrector->jacobian != corrector::JacobianKind::kSap &&
      corrector->jacobian != corrector::JacobianKind::kHeun) {
    return 1 + max_inputs;
  }
  return 1 + static_cast<std::size_t>(control::comparison_runs(settings.scheme.control.estimator));
}

static_assert(config::kMaxSubsystems + 2 <= ipc::kMaxRegions,
              "the process executor needs a segment region per subsystem and two of its own");

// The options of the worker processes (process executor, or every MPI node agent's).
executors::ProcessOptions worker_options(const CosimSettings& settings,
                                         const system::CoupledSystem& system) {
  executors::ProcessOptions po;
  po.solver = settings.executor.solver;
  po.subsystem_solvers = settings.executor.subsystem_solvers;
  po.rollback = settings.executor.rollback;
  po.jumps = settings.executor.jumps;
  po.threads = settings.executor.threads;
  po.executable = settings.worker_executable;
  po.hang_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(std::llround(settings.hang_timeout * 1000.0)));
  std::size_t largest = 0;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    largest = std::max(largest, system.subsystem(i).state_size());
  }
  // Rounded up: a timeout below a millisecond is one, not none.
  po.handshake_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(
      std::ceil(settings.handshake_timeout.value_or(handshake_timeout_for(largest)) * 1000.0)));
  return po;
}

// The executor of the settings. The process executor's placement (contract 4: the master one
// PU, every worker 1 + k PUs, k its extra runs) goes into `meta` and `placement`; the MPI
// bridge's per rank and node. `models` describes every subsystem for its worker process.
std::unique_ptr<executors::Executor> make_executor(
    const CosimSettings& settings, const system::CoupledSystem& system,
    const std::vector<library::ModelDescription>& models, std::span<const double> u0, json& meta,
    std::string& placement) {
  if (settings.cosim.executor == config::ExecutorKind::kInProcess) {
    return std::make_unique<executors::InProcessExecutor>(system, u0, settings.executor);
  }
  executors::ProcessOptions po = worker_options(settings, system);
  std::size_t inputs = 0;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    inputs = std::max(inputs, system.subsystem(i).input_size());
  }
  if (settings.cosim.executor == config::ExecutorKind::kMpi) {
    BridgeRequest request{
        &system, models, u0, po, settings.pin.to_string(), runs_per_subsystem(settings, inputs)};
    return settings.mpi->make(request, meta["placement"], placement);
  }
  const placement::PlacementMap map =
      placement::plan_placement(placement::Topology::detect(), settings.pin,
                                system.subsystem_count(), runs_per_subsystem(settings, inputs));
  po.cpusets = map.subsystems;
  po.host_first_subsystem = settings.master_hosts_first;
  po.max_restarts = settings.max_restarts;
  // Every recovery is told on stderr as it happens and listed in the metadata.
  po.on_recovery = [&meta](const std::string& what) {
    fmt::print(stderr, "\nmacrostep: recovered from a worker failure: {}\n", what);
    meta["recoveries"].push_back(what);
  };
  meta["placement"] = map.to_json();
  placement = map.describe();
  auto executor = std::make_unique<executors::ProcessExecutor>(system, models, u0, po);
  // The master is bound after the workers are spawned, so unpinned workers keep every PU.
  // Hosting subsystem 1, it takes that subsystem's PUs.
  placement::bind_current_process(settings.master_hosts_first ? map.subsystems.front()
                                                              : map.master);
  return executor;
}

// The coupled system of the configuration (the cut chain, or the system description) and the
// description of every subsystem for its worker process (`models`).
system::CoupledSystem coupled_system(const config::RunConfig& config,
                                     std::vector<library::ModelDescription>& models) {
  if (config.system_description) {
    for (const auto& sub : config.system_description->subsystems) models.push_back(sub.model);
    return system::build_system(*config.system_description);
  }
  // Shared by the segments' descriptions.
  const auto chain =
      std::make_shared<const library::ChainParameters>(config::realize_chain(config));
  models = library::chain_segment_descriptions(chain, config.partition.boundaries);
  return system::make_chain_system(*chain, config.partition.boundaries);
}

// One output written as a result column.
struct OutputColumn {
  std::string name;
  system::OutputRef output;
};

// The outputs of the result columns (DESIGN.md column naming): for the chain the monitored
// outputs (the coupling bodies' x and v, interleaved; a body next to two cuts once); for a system
// description every output of every subsystem, "<subsystem>.<output>" (a name a model repeats,
// once), as its monolithic run writes them.
std::vector<OutputColumn> output_columns(const config::RunConfig& config,
                                         const system::CoupledSystem& system) {
  std::vector<OutputColumn> out;
  if (!config.system_description) {
    // A subsystem of one mass has that mass on both sides: one column for it.
    std::set<std::string> seen;
    for (const auto& m : system.monitored_outputs()) {
      if (seen.insert(m.name).second) out.push_back({m.name, m.output});
    }
    return out;
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto& sub = system.subsystem(i);
    for (std::size_t o : system::distinct_outputs(sub)) {
      out.push_back(
          {config.system_description->subsystems[i].name + "." + sub.output_name(o), {i, o}});
    }
  }
  return out;
}

// The result columns: the output columns or every state (a system description prefixes state
// names with "<subsystem>."), then the coupling variables (lambda_L, or named after their
// connection). state_offset[i] is subsystem i's first state column (all_states).
void result_columns(const config::RunConfig& config, const system::CoupledSystem& system,
                    const std::vector<OutputColumn>& outputs, bool all_states,
                    std::vector<std::string>& columns, std::vector<std::size_t>& state_offset) {
  const std::size_t ns = system.subsystem_count();
  state_offset.assign(ns + 1, 0);
  if (all_states) {
    for (std::size_t i = 0; i < ns; ++i) {
      const auto& sub = system.subsystem(i);
      const std::string prefix =
          config.system_description ? config.system_description->subsystems[i].name + "." : "";
      for (std::size_t j = 0; j < sub.state_size(); ++j) {
        columns.push_back(prefix + sub.state_name(j));
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

// The CSV row of an accepted point: the output columns from p.outputs, or (all_states, the
// executor given) every subsystem's accepted state, then the coupling variables.
void fill_row(const AcceptedPoint& p, const system::CoupledSystem& system,
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

// The metadata's model: the chain's size and seed, or the described subsystems and connections.
json model_json(const config::RunConfig& config) {
  if (!config.system_description) {
    return {{"type", "chain"}, {"masses", config.chain.masses}, {"seed", config.chain.seed}};
  }
  json subsystems = json::array(), connections = json::array();
  for (const auto& s : config.system_description->subsystems) {
    subsystems.push_back({{"name", s.name}, {"model", library::describe(s.model)}});
  }
  for (const auto& c : config.system_description->connections) {
    connections.push_back({{"name", c.name}, {"variables", system::coupling_names(c)}});
  }
  return {{"type", "system"}, {"subsystems", subsystems}, {"connections", connections}};
}

json partition_json(const config::RunConfig& config, const system::CoupledSystem& system) {
  if (!config.system_description) {
    return {{"subsystems", system.subsystem_count()},
            {"boundaries", config.partition.boundaries},
            {"coupling_bodies", config.partition.coupling_bodies()},
            {"coupling_variables", system.coupling_count()}};
  }
  return {{"subsystems", system.subsystem_count()},
          {"coupling_variables", system.coupling_count()}};
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

// The metadata known before the run starts.
json run_metadata(const config::RunConfig& config, const CosimOptions& options,
                  const system::CoupledSystem& system, const CosimResult& result) {
  const CosimSettings& settings = result.settings;
  const ida::IntegratorOptions& solver = settings.executor.solver;
  json meta = {
      {"command", options.command_line},
      {"mode", "cosimulation"},
      {"started_at", output::utc_timestamp()},
      {"config", {{"path", config.path}, {"text", config.text}}},
      {"description", config.description},
      {"model", model_json(config)},
      {"partition", partition_json(config, system)},
      {"cosim", cosim_json(settings)},
      {"solver", solver_json(solver)},
      {"simulation", {{"start_time", 0.0}, {"end_time", settings.end_time}}},
      {"output",
       {{"file", result.csv_path},
        {"columns", result.columns.size()},
        {"all_states", settings.all_states},
        {"output_every", settings.cosim.output_every}}},
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

// Accepted and rejected macro steps as the observers counted them.
struct StepCounts {
  std::uint64_t accepted = 0, rejected = 0;
  std::array<std::uint64_t, control::kMaxKappa + 1> by_kappa{};
};

// The statistics of the run so far (also of a failed one): steps, order histogram, work per
// subsystem (when the executor exists).
json step_statistics(const StepCounts& counts, const CosimResult& result, double reached,
                     const executors::Executor* executor, const config::RunConfig& config) {
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
    const double h = result.time_by_kappa[static_cast<std::size_t>(k)];
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
  const std::size_t ns = config::subsystem_count(config);
  const auto& boundaries = config.partition.boundaries;
  for (std::size_t i = 0; executor != nullptr && i < ns; ++i) {
    json sub = {{"subsystem", i + 1}};
    if (config.system_description) {
      sub["name"] = config.system_description->subsystems[i].name;
    } else {
      sub["masses"] = {boundaries[i] + 1, boundaries[i + 1]};
    }
    sub.update(stats_json(executor->total_stats(i)));
    subsystems.push_back(sub);
  }
  statistics["subsystems"] = subsystems;
  return statistics;
}

// Σ_L Σ_N T_{L,N}: the nominal runs of every pass, all subsystems (beside the perturbed runs'
// time, which sums over subsystems as well).
double nominal_ns(const SchemeResult& r) {
  double ns = 0.0;
  for (double t : r.subsystem_solver_ns) ns += t;
  return ns;
}

// What only a completed run reports: failures by cause, H statistics, per-subsystem solver time.
void add_completed_statistics(const SchemeResult& r, double t_end, json& statistics) {
  statistics["corrector_failures"] = r.steps.corrector_failures;
  if (r.corrector.attempts > 0) {
    statistics["corrector"] = {
        {"passes", r.corrector.passes},
        {"mean_passes", r.corrector.mean_passes()},
        {"max_passes", r.corrector.max_passes},
        {"jacobian_evaluations", r.corrector.jacobian_evaluations},
        {"perturbed_runs_s", 1e-9 * static_cast<double>(r.time.extra_runs_ns)},
        {"nominal_runs_s", 1e-9 * nominal_ns(r)},
    };
  }
  // Only runs that evaluated outputs (a feed-through subsystem not affine in its inputs): the
  // statistics of every other run keep their keys.
  if (r.consistent_update.output_evaluations > 0) {
    const ConsistentUpdateStatistics& c = r.consistent_update;
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

// The scheme, its estimator and its corrector keys together (after the overrides).
void check_scheme_combination(const config::CosimConfig& c, const CosimOptions& options) {
  const std::string scheme_source =
      options.scheme ? fmt::format("--scheme {}", config::to_string(c.scheme))
                     : fmt::format("cosim.scheme = \"{}\"", config::to_string(c.scheme));
  if (!config::estimator_fits(c.scheme, c.estimator)) {
    throw SetupError(fmt::format(
        "{} {} does not belong to {} (allowed: {}){}",
        options.estimator ? "--estimator" : "cosim.estimator =", config::to_string(c.estimator),
        scheme_source,
        c.scheme == config::CosimScheme::kGaussSeidel ? "none: a fixed step size, METHODS D-10"
        : c.iterative()                               ? "imMD, imCV, none"
                                                      : "exMD, exLE, exCV, none",
        options.estimator ? "" : "; give --estimator with one of them"));
  }
  if (options.jacobian && (!c.iterative() || c.scheme == config::CosimScheme::kWaveform)) {
    throw SetupError(fmt::format(
        "--jacobian applies to the implicit and semi-implicit schemes; {} has no interface "
        "Jacobian",
        scheme_source));
  }
  // Corrector keys in the file were checked against the file's scheme; --scheme over it may
  // leave them without meaning.
  if (!c.iterative() && c.corrector_keys_given) {
    throw SetupError(scheme_source +
                     ": the file sets corrector keys (jacobian, tau, max_corrector_passes, "
                     "perturbation_min, omega) that the explicit scheme does not use");
  }
  if (c.scheme != config::CosimScheme::kGaussSeidel && !c.sequence.empty()) {
    throw SetupError(scheme_source + ": cosim.sequence applies only to the gauss-seidel scheme");
  }
  if (c.scheme == config::CosimScheme::kGaussSeidel && c.approximation.uses_rates()) {
    throw SetupError(scheme_source +
                     fmt::format(": Gauss-Seidel takes the approximations without rates "
                                 "(lagrange, c0, c1, the b = 0 sets), not \"{}\"",
                                 c.approximation.name));
  }
  if (c.scheme != config::CosimScheme::kWaveform && c.omega_given) {
    throw SetupError(scheme_source + ": cosim.omega applies only to the waveform scheme");
  }
  if (c.scheme == config::CosimScheme::kWaveform && c.jacobian_given && !options.jacobian) {
    throw SetupError(scheme_source + ": cosim.jacobian has no meaning for waveform relaxation");
  }
}

// Every approximation in effect against the scheme, estimator and order after the overrides
// (the file alone was checked when it was read).
void check_approximation_settings(const config::CosimConfig& c, const CosimOptions& options,
                                  const std::vector<std::string>& connections) {
  const std::string source =
      options.approximation ? fmt::format("--approximation {}", c.approximation.name)
                            : fmt::format("cosim.approximation = \"{}\"", c.approximation.name);
  if (const std::string problem = config::approximation_problem(c.approximation, c);
      !problem.empty()) {
    throw SetupError(source + ": " + problem);
  }
  for (std::size_t k = 0; k < connections.size(); ++k) {
    if (connections[k].empty()) continue;
    const std::string problem =
        config::approximation_problem(coupling::parse_approximation(connections[k]), c);
    if (!problem.empty()) {
      throw SetupError(fmt::format("connection[{}].approximation: {}", k + 1, problem));
    }
  }
}

// The approximation of every coupling variable (SchemeOptions::approximations): empty when all
// are Lagrange, so that such runs take the step polynomials of before unchanged.
std::vector<coupling::Approximation> coupling_approximations(const CosimSettings& s,
                                                             const system::CoupledSystem& system) {
  std::vector<coupling::Approximation> out(system.coupling_count(), s.cosim.approximation);
  for (std::size_t k = 0; k < s.connection_approximations.size(); ++k) {
    if (s.connection_approximations[k].empty()) continue;
    const auto a = coupling::parse_approximation(s.connection_approximations[k]);
    for (std::size_t j = 0; j < system.law(k).write_count(); ++j) out[system.law_offset(k) + j] = a;
  }
  const bool all_lagrange =
      std::all_of(out.begin(), out.end(), [](const auto& a) { return a.is_lagrange(); });
  if (all_lagrange) out.clear();
  try {
    schemes::check_approximations(system, out);
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
  return out;
}

// The scheme's options from the [cosim] values in effect (METHODS §9 defaults); SetupError if the
// controller refuses them.
// [cosim] jump_handling and min_micro_steps as the runners' options.
runner::JumpOptions jump_options(const config::CosimConfig& c) {
  runner::JumpOptions j;
  switch (c.jump_handling) {
    case config::JumpHandling::kKeep:
      j.policy = runner::JumpPolicy::kKeep;
      break;
    case config::JumpHandling::kShift:
      j.policy = runner::JumpPolicy::kShift;
      break;
    case config::JumpHandling::kRestart:
      j.policy = runner::JumpPolicy::kRestart;
      break;
    case config::JumpHandling::kRestartAuto:
      j.policy = runner::JumpPolicy::kRestartAuto;
      break;
  }
  j.micro_steps = c.min_micro_steps;
  return j;
}

SchemeOptions scheme_options(const config::CosimConfig& c, double end_time) {
  SchemeOptions scheme;
  control::MacroStepOptions& m = scheme.control;
  m.t_start = 0.0;
  m.t_end = end_time;
  m.estimator = to_control(c.estimator);
  const config::OrderSetting order = c.effective_order();
  if (c.fixed_step()) {
    m.mode = control::StepSizeMode::kFixed;
    m.h = *c.step_size;
    m.kappa_fixed = order.kappa;
  } else {
    m.mode = control::StepSizeMode::kVariable;
    m.h = c.step_size.value_or(config::kDefaultInitialStep);
    if (order.automatic) {
      m.order.strategy = c.order_strategy == config::OrderStrategyKind::kConservative
                             ? control::OrderStrategy::kConservative
                             : control::OrderStrategy::kIdaLike;
      m.order.kappa_max = config::kMaxCosimOrder;
    } else {
      m.order.strategy = control::OrderStrategy::kFixed;
      m.order.kappa_max = order.kappa;
    }
    m.tolerances.rtol = c.rtol;
    m.tolerances.atol_pos = c.effective_atol_pos();
    m.tolerances.atol_vel = c.effective_atol_vel();
    m.tolerances.atol_u = c.effective_atol_u();
    m.step.safety = c.safety;
    m.step.r_min = c.r_min;
    m.step.r_max = c.r_max;
    m.step.dead_zone = c.dead_zone;
    if (c.h_max) m.step.h_max = *c.h_max;
  }
  if (c.scheme == config::CosimScheme::kGaussSeidel) {
    schemes::GaussSeidelOptions gs;
    gs.sequence = c.sequence;
    scheme.gauss_seidel = gs;
    // Its repetitions of a subsystem whose law reads its own outputs settle in these weights.
    m.tolerances.rtol = c.rtol;
    m.tolerances.atol_pos = c.effective_atol_pos();
    m.tolerances.atol_vel = c.effective_atol_vel();
    m.tolerances.atol_u = c.effective_atol_u();
  }
  scheme.least_squares = c.predictor == config::PredictorKind::kLeastSquares;
  scheme.least_squares_points = c.least_squares_points;
  if (c.iterative()) {
    corrector::CorrectorOptions o;
    o.iteration = c.scheme == config::CosimScheme::kSemiImplicit
                      ? corrector::IterationKind::kSemiImplicit
                  : c.scheme == config::CosimScheme::kWaveform ? corrector::IterationKind::kWaveform
                                                               : corrector::IterationKind::kNewton;
    o.jacobian =
        c.jacobian == config::JacobianSource::kSap           ? corrector::JacobianKind::kSap
        : c.jacobian == config::JacobianSource::kReuse       ? corrector::JacobianKind::kReuse
        : c.jacobian == config::JacobianSource::kQuasiNewton ? corrector::JacobianKind::kQuasiNewton
        : c.jacobian == config::JacobianSource::kHeun        ? corrector::JacobianKind::kHeun
                                                      : corrector::JacobianKind::kFiniteDifference;
    o.tau = c.tau;
    o.max_passes = c.max_corrector_passes;
    o.perturbation_min = c.perturbation_min;
    o.omega = c.omega;
    scheme.corrector = o;
    if (c.fixed_step()) {  // the convergence test's weights (METHODS §4.3)
      m.tolerances.rtol = c.rtol;
      m.tolerances.atol_pos = c.effective_atol_pos();
      m.tolerances.atol_vel = c.effective_atol_vel();
      m.tolerances.atol_u = c.effective_atol_u();
    }
  }
  try {
    if (scheme.corrector) scheme.corrector->validate();
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
  return scheme;
}

// The command line's numbers, each checked on its own (SetupError naming the flag).
void check_override_values(const CosimOptions& options) {
  if (options.stop_time && !(*options.stop_time > 0.0 && std::isfinite(*options.stop_time))) {
    throw SetupError(fmt::format("--stop-time must be > 0 (got {})", *options.stop_time));
  }
  if (options.rtol && !(*options.rtol > 0.0 && *options.rtol < 1.0)) {
    throw SetupError(fmt::format("--rtol must be in (0, 1) (got {})", *options.rtol));
  }
  if (options.step_size && !(*options.step_size > 0.0 && std::isfinite(*options.step_size))) {
    throw SetupError(fmt::format("--step-size must be > 0 (got {})", *options.step_size));
  }
  if (options.order && !options.order->automatic &&
      (options.order->kappa < 0 || options.order->kappa > config::kMaxCosimOrder)) {
    throw SetupError(fmt::format("--order must be auto or an integer 0..{} (got {})",
                                 config::kMaxCosimOrder, options.order->kappa));
  }
  if (options.min_micro_steps && (*options.min_micro_steps < 0 || *options.min_micro_steps == 1 ||
                                  *options.min_micro_steps > 1000)) {
    throw SetupError(fmt::format("--min-micro-steps must be 0 (no limit) or 2..1000 (got {})",
                                 *options.min_micro_steps));
  }
  if (options.threads && *options.threads < 0) {
    throw SetupError(fmt::format("--threads must be >= 0 (got {})", *options.threads));
  }
}

// The process executor's settings: hang and handshake timeouts, recoveries, placement.
void resolve_process_settings(const config::RunConfig& config, const CosimOptions& options,
                              CosimSettings& s) {
  if (options.hang_timeout) {
    if (!(*options.hang_timeout >= 0.0 && *options.hang_timeout <= 1e6)) {
      throw SetupError(
          fmt::format("--hang-timeout must be 0 (off) or a number of seconds up to "
                      "1e6 (got {})",
                      *options.hang_timeout));
    }
    s.hang_timeout = *options.hang_timeout;
  }
  if (options.max_restarts) {
    if (*options.max_restarts < 0 || *options.max_restarts > 1000) {
      throw SetupError(
          fmt::format("--max-restarts must be an integer 0..1000 (got {})", *options.max_restarts));
    }
    s.max_restarts = static_cast<unsigned>(*options.max_restarts);
  }
  s.handshake_timeout =
      options.handshake_timeout ? options.handshake_timeout : config.executor.handshake_timeout;
  if (options.handshake_timeout &&
      !(*options.handshake_timeout > 0.0 && *options.handshake_timeout <= 1e6)) {
    throw SetupError(
        fmt::format("--handshake-timeout must be a number of seconds in (0, 1e6] (got {})",
                    *options.handshake_timeout));
  }
  try {
    s.pin = placement::parse_pin(options.pin);
    // A listed PU must exist and be usable (the same check as `macrostep topology --pin`), and a
    // map needs one entry per process; before anything starts.
    if (options.pin != "none") {
      placement::plan_placement(placement::Topology::detect(), s.pin,
                                config::subsystem_count(config), 1);
    }
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
}

// Flags that only the process executor, or only some schemes, can honour.
void check_executor_combination(const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  if (s.master_hosts_first && c.executor != config::ExecutorKind::kProcesses) {
    throw SetupError(
        "--master-hosts-first applies to the process executor (--executor processes); the "
        "in-process executor runs every subsystem in the master anyway");
  }
  if (s.max_restarts > 0 && c.executor != config::ExecutorKind::kProcesses) {
    throw SetupError(
        "--max-restarts applies to the process executor (--executor processes): a subsystem "
        "in the master's own process cannot crash alone");
  }
}

// What a checkpoint of a run with these settings would not carry (its scheme could not continue
// bit-identically from it), as "jump_handling = ... (why); what to use"; empty: nothing.
std::string checkpoint_obstacle(const config::RunConfig& config, const config::CosimConfig& c) {
  if (config.solver.micro_step_stop == config::MicroStepStop::kOvershoot) {
    return "[solver] micro_step_stop = \"overshoot\" (the state at a macro point is interpolated "
           "and has no workspace to export)";
  }
  if (c.iterative() && c.scheme != config::CosimScheme::kWaveform &&
      (c.jacobian == config::JacobianSource::kReuse ||
       c.jacobian == config::JacobianSource::kQuasiNewton)) {
    return fmt::format(
        "jacobian = \"{}\" (a checkpoint does not carry the reused Jacobian or the secant "
        "history); use fd or sap",
        config::to_string(c.jacobian));
  }
  return {};
}

// Checkpoints (and resuming one) export and import every subsystem's workspace, which needs the
// snapshots (rollback) even where the scheme does not; the numbers are the same either way
// (contract 2). What an export does not carry is refused.
void check_checkpoint_settings(const config::RunConfig& config, const CosimOptions& options,
                               CosimSettings& s) {
  const config::OutputConfig& o = config.output;
  s.checkpoint_every = options.checkpoint_every;
  if (!s.checkpoint_every && !o.checkpoint_every.empty()) {
    try {
      s.checkpoint_every = checkpoint::parse_interval(o.checkpoint_every, "checkpoint_every");
    } catch (const std::invalid_argument& e) {
      throw SetupError(
          fmt::format("{}:{}: output.{}", config.path, o.checkpoint_every_line, e.what()));
    }
  }
  s.checkpoint_path = !options.checkpoint_path.empty() ? options.checkpoint_path : o.checkpoint;
  if (!s.checkpoint_every && options.resume == nullptr) {
    s.no_final_checkpoint = checkpoint_obstacle(config, s.cosim);
    if (!s.checkpoint_path.empty()) {
      throw SetupError(
          options.checkpoint_path.empty()
              ? fmt::format("{}:{}: output.checkpoint: names the file of checkpoint_every; give "
                            "output.checkpoint_every (or --checkpoint-every) too",
                            config.path, o.checkpoint_line)
              : std::string("--checkpoint names the checkpoint file of --checkpoint-every; give "
                            "both (or output.checkpoint_every)"));
    }
    return;
  }
  const char* flag = options.resume != nullptr  ? "resume"
                     : options.checkpoint_every ? "--checkpoint-every"
                                                : "output.checkpoint_every";
  if (const std::string obstacle = checkpoint_obstacle(config, s.cosim); !obstacle.empty()) {
    throw SetupError(fmt::format("{} does not work with {}", flag, obstacle));
  }
  s.executor.rollback = true;
}

// [solver] micro_step_stop = "overshoot" (METHODS §6.6 option (a), D-36): only where no step is
// repeated and nothing restarts or restores a workspace, since the state at T_{N+1} is
// interpolated while IDA stands beyond it (checkpoints are refused by checkpoint_obstacle).
void check_micro_step_stop(const config::RunConfig& config, const CosimSettings& s) {
  if (config.solver.micro_step_stop != config::MicroStepStop::kOvershoot) return;
  const config::CosimConfig& c = s.cosim;
  std::string conflict;
  if (!c.fixed_step() || c.scheme != config::CosimScheme::kExplicit)
    conflict = "a fixed-H explicit co-simulation (estimator none, scheme explicit)";
  else if (c.jump_handling != config::JumpHandling::kKeep)
    conflict = "jump_handling = \"keep\"";
  else if (s.executor.rollback)
    conflict = "no workspace snapshots (no --max-restarts)";
  if (!conflict.empty()) {
    throw SetupError(fmt::format(
        "{}:{}: solver.micro_step_stop: \"overshoot\" (step past T_(N+1) and interpolate) "
        "needs {} (METHODS D-36)",
        config.path, config.solver.micro_step_stop_line, conflict));
  }
}

// A fixed macro step: it needs a size, a fixed degree, no controller tolerance, and a bounded
// number of rows; a controlled one a first step within h_max.
void check_step_settings(const config::CosimConfig& c, const CosimOptions& options,
                         double end_time) {
  const std::string estimator_source =
      options.estimator ? "--estimator none" : "cosim.estimator = \"none\"";
  if (c.fixed_step()) {
    if (!c.step_size) {
      throw SetupError(estimator_source +
                       " needs a fixed macro-step size: give --step-size H (or cosim.step_size)");
    }
    if (c.order && c.order->automatic) {
      throw SetupError(fmt::format(
          "{} with {}: order control needs an error estimator; give a fixed degree --order K "
          "(0..{})",
          estimator_source, options.order ? "--order auto" : "cosim.order = \"auto\"",
          config::kMaxCosimOrder));
    }
    if (options.rtol && !c.iterative() && c.scheme != config::CosimScheme::kGaussSeidel) {
      throw SetupError(
          "--rtol sets the macro-step controller's tolerance, and " + estimator_source +
          " (a fixed step) has no controller; the subsystem tolerance is [solver] rtol");
    }
  }
  if (c.fixed_step()) {
    const double rows = end_time / (*c.step_size * c.output_every);
    if (rows > config::kMaxOutputRows) {
      throw SetupError(fmt::format(
          "a fixed step of {} s over {} s with output_every = {} gives {:.3g} rows (at most "
          "{:.3g}); raise cosim.output_every",
          *c.step_size, end_time, c.output_every, rows, config::kMaxOutputRows));
    }
  } else if (c.h_max && c.step_size && *c.step_size > *c.h_max) {
    throw SetupError(
        fmt::format("--step-size {} exceeds cosim.h_max = {}", *c.step_size, *c.h_max));
  }
}

// Per subsystem its IDA settings where a [[subsystem]] gives solver keys of its own; empty when
// none does (every subsystem then runs with [solver]'s, the code path of every other file).
std::vector<ida::IntegratorOptions> subsystem_solvers(const config::RunConfig& config) {
  const auto& overrides = config.subsystem_solvers;
  if (std::all_of(overrides.begin(), overrides.end(), [](const auto& o) { return o.empty(); })) {
    return {};
  }
  std::vector<ida::IntegratorOptions> solvers;
  for (const auto& o : overrides) {
    solvers.push_back(integrator_options(config::with_override(config.solver, o)));
  }
  return solvers;
}

}  // namespace

CosimSettings resolve_cosim(const config::RunConfig& config, const CosimOptions& options) {
  config::check_cosimulation(config);
  CosimSettings s;
  config::CosimConfig& c = s.cosim;
  c = config.cosim;

  check_override_values(options);
  resolve_process_settings(config, options, s);
  if (options.scheme) c.scheme = *options.scheme;
  if (options.estimator) {
    c.estimator = *options.estimator;
    c.estimator_given = true;
  } else if (!c.estimator_given) {
    c.estimator = config::default_estimator(c.scheme);  // D-48
  }
  if (options.jacobian) c.jacobian = *options.jacobian;
  if (options.order) c.order = *options.order;
  if (options.approximation) c.approximation = *options.approximation;
  if (config.system_description && !options.approximation) {
    for (const auto& connection : config.system_description->connections)
      s.connection_approximations.push_back(connection.approximation);
  }
  if (options.jump_handling) c.jump_handling = *options.jump_handling;
  if (options.min_micro_steps) c.min_micro_steps = *options.min_micro_steps;
  if (options.step_size) c.step_size = *options.step_size;
  if (options.threads) c.threads = *options.threads;
  if (options.executor) {
    c.executor = *options.executor;
    c.executor_given = true;
  }
  s.master_hosts_first = options.master_hosts_first;
  s.mpi = options.mpi;
  if (c.executor == config::ExecutorKind::kMpi && !s.mpi) {
    throw SetupError(
        "--executor mpi runs under mpirun in a macrostep built with the MPI bridge "
        "(mpirun -np R macrostep run CONFIG --executor mpi)");
  }
  // Default: a process per subsystem whenever there is more than one subsystem; the
  // results are bit-identical to in-process (tests/executors).
  if (!c.executor_given) {
    c.executor = config::subsystem_count(config) > 1 ? config::ExecutorKind::kProcesses
                                                     : config::ExecutorKind::kInProcess;
  }
  if (options.rtol) c.rtol = *options.rtol;  // the atols that were not given follow it

  // ---- combinations (the file alone was checked when it was read) ----
  check_scheme_combination(c, options);
  check_executor_combination(s);
  s.end_time = options.stop_time.value_or(config.simulation.end_time);
  check_step_settings(c, options, s.end_time);
  if (c.predictor == config::PredictorKind::kLeastSquares &&
      c.least_squares_points <= c.highest_order() + 1) {
    throw SetupError(fmt::format(
        "--order {} needs cosim.least_squares_points > {} for the least-squares predictor (got "
        "{})",
        order_text(c.effective_order()), c.highest_order() + 1, c.least_squares_points));
  }
  check_approximation_settings(c, options, s.connection_approximations);
  s.scheme = scheme_options(c, s.end_time);

  s.executor.solver = integrator_options(config.solver);
  s.executor.subsystem_solvers = subsystem_solvers(config);
  // Crash recovery restores the workers' accepted states: it needs the snapshots even where the
  // scheme does not (the numbers are the same either way, contract 2).
  s.executor.rollback = needs_rollback(s.scheme) || s.max_restarts > 0;
  s.executor.threads = c.threads;
  s.executor.jumps = jump_options(c);
  s.all_states = options.all_states || config.output.all_states;
  check_checkpoint_settings(config, options, s);
  check_micro_step_stop(config, s);
  return s;
}

double handshake_timeout_for(std::size_t largest_subsystem_states) {
  return 10.0 + 1e-4 * static_cast<double>(largest_subsystem_states);
}

namespace {

// Gauss–Seidel's sequence names every subsystem of the built system once (the file checked the
// numbers and duplicates, not the count).
void check_sequence(const config::RunConfig& config, const CosimSettings& settings,
                    const system::CoupledSystem& system) {
  const config::CosimConfig& c = settings.cosim;
  if (c.scheme != config::CosimScheme::kGaussSeidel || c.sequence.empty()) return;
  const std::size_t ns = system.subsystem_count();
  const bool in_range =
      std::all_of(c.sequence.begin(), c.sequence.end(), [ns](std::size_t i) { return i < ns; });
  if (c.sequence.size() != ns || !in_range) {
    throw SetupError(fmt::format(
        "{}:{}: cosim.sequence: must name each of the {} subsystems once, numbered 1..{} (got {} "
        "entries)",
        config.path, c.sequence_line, ns, ns, c.sequence.size()));
  }
}

// Direct feed-through (METHODS D-1) needs an interface Jacobian that sees ∂y/∂u: refused before
// any file is written. (Every explicit scheme, Gauss–Seidel too, makes the consistent update.)
void check_feedthrough_combination(const config::RunConfig& config, const CosimSettings& settings,
                                   const system::CoupledSystem& system) {
  if (!system.has_feedthrough()) return;
  const config::CosimConfig& c = settings.cosim;
  if (c.iterative() && c.scheme != config::CosimScheme::kWaveform &&
      (c.jacobian == config::JacobianSource::kSap || c.jacobian == config::JacobianSource::kHeun)) {
    throw SetupError(fmt::format(
        "{}: jacobian {}: the {} interface Jacobian misses the direct feed-through ∂y/∂u of "
        "this system's subsystems; use jacobian fd, reuse or quasi-newton",
        config.path, config::to_string(c.jacobian), config::to_string(c.jacobian)));
  }
}

// A constraint coupling (a joint; METHODS §8, seed 004) is solved by Newton with ∂y/∂u only:
// refused before any file is written for the schemes and Jacobians that cannot. Its multipliers
// are index-2 variables: the corrector fixes the integral of their step polynomial, whose
// end-value recurrence is stable only up to κ = 1 (κ = 0: r = 0; κ = 1, the trapezoid: r = −1;
// κ = 2, Adams-Moulton weights 5/12, 8/12, −1/12: 5r² + 8r − 1 = 0, r = −1.72, the multipliers
// oscillate with period 2H and grow). A fixed κ ≥ 2 is refused, order control stays at κ ≤ 1.
void check_constraint_combination(const config::RunConfig& config,
                                  const system::CoupledSystem& system, CosimSettings& settings) {
  if (!system.has_constraints()) return;
  control::MacroStepOptions& m = settings.scheme.control;
  const bool fixed_order =
      m.mode == control::StepSizeMode::kFixed || m.order.strategy == control::OrderStrategy::kFixed;
  const int kappa = m.mode == control::StepSizeMode::kFixed ? m.kappa_fixed : m.order.kappa_max;
  if (fixed_order && kappa >= 2) {
    throw SetupError(fmt::format(
        "{}: order {}: a joint's multipliers are unstable under extrapolation of degree 2 and "
        "more (for kappa = 2 their recurrence 5r^2 + 8r - 1 = 0 has the root -1.72); use order 0 "
        "or 1 (order auto stays at kappa <= 1 with a joint)",
        config.path, kappa));
  }
  if (!fixed_order) m.order.kappa_max = std::min(m.order.kappa_max, 1);
  const config::CosimConfig& c = settings.cosim;
  const bool newton =
      c.scheme == config::CosimScheme::kImplicit || c.scheme == config::CosimScheme::kSemiImplicit;
  if (!newton) {
    throw SetupError(fmt::format(
        "{}: scheme {}: a joint (constraint coupling) has no law u = φ(y) for its multipliers; "
        "they are solved by the corrector: use scheme implicit or semi-implicit (seed 004)",
        config.path, config::to_string(c.scheme)));
  }
  if (c.jacobian != config::JacobianSource::kFiniteDifference &&
      c.jacobian != config::JacobianSource::kReuse && c.jacobian != config::JacobianSource::kHeun) {
    throw SetupError(fmt::format(
        "{}: jacobian {}: a joint (constraint coupling) needs an interface Jacobian of the "
        "subsystems' response; use jacobian fd, reuse or heun (seed 004 Eq. 49)",
        config.path, config::to_string(c.jacobian)));
  }
}

// The result row of the newest accepted macro point, written every output_every-th point and
// at the end (the last point always reaches the file).
struct ResultRow {
  ResultRow(output::TableWriter& csv, CosimResult& result)
      : values(result.columns.size()), csv_(csv), result_(result) {}
  void flush() {
    const auto t0 = Clock::now();
    csv_.write_row(time, values);
    pending = false;
    result_.final_values = values;
    result_.final_time = time;
    result_.output_ns += ns_since(t0);
  }
  std::vector<double> values;
  double time = 0.0;
  bool pending = false;  // the point is not in the file yet

 private:
  output::TableWriter& csv_;
  CosimResult& result_;
};

// A resumed run's counters, newest row and reached time from its checkpoint.
void continue_counts(const checkpoint::Checkpoint& c, CosimResult& result, ResultRow& row,
                     StepCounts& counts, double& reached) {
  if (c.last_row.size() != row.values.size() ||
      c.accepted_by_kappa.size() != counts.by_kappa.size() ||
      c.time_by_kappa.size() != result.time_by_kappa.size()) {
    throw checkpoint::CheckpointError(
        "the checkpoint's result row or order histogram does not fit its configuration");
  }
  counts.accepted = c.accepted_steps;
  counts.rejected = c.rejected_steps;
  std::copy(c.accepted_by_kappa.begin(), c.accepted_by_kappa.end(), counts.by_kappa.begin());
  std::copy(c.time_by_kappa.begin(), c.time_by_kappa.end(), result.time_by_kappa.begin());
  row.values = c.last_row;
  row.time = c.last_row_time;
  row.pending = c.last_row_pending;
  result.final_values = c.last_row;
  result.final_time = c.last_row_time;
  reached = c.time;
}

// --checkpoint, or the default beside the CSV.
std::string checkpoint_path(const CosimSettings& settings, const CosimResult& result) {
  const std::string path = settings.checkpoint_path.empty()
                               ? checkpoint::default_path(result.csv_path)
                               : settings.checkpoint_path;
  if (same_file(path, result.csv_path) || path == result.csv_path || path == result.json_path) {
    throw SetupError(fmt::format("the checkpoint {} would overwrite a result file", path));
  }
  return path;
}

// The run's checkpoints: every settings.checkpoint_every and a final one on a signal, or (no
// interval) the final one only, where the run can have it; otherwise none, and `none` says why.
std::optional<RunCheckpoints> run_checkpoints(const CosimSettings& settings,
                                              const CosimResult& result, const ResultFiles& files,
                                              std::uint64_t accepted, std::string& none) {
  if (settings.checkpoint_every) {
    return std::optional<RunCheckpoints>(std::in_place, checkpoint_path(settings, result),
                                         *settings.checkpoint_every, accepted);
  }
  if (!settings.no_final_checkpoint.empty()) {
    none = "checkpoints do not work with " + settings.no_final_checkpoint;
  } else if (files.results_csv() == nullptr) {
    none = "checkpoints continue CSV results only";
  } else {
    try {
      return std::optional<RunCheckpoints>(std::in_place, checkpoint_path(settings, result),
                                           checkpoint::Interval{}, accepted);
    } catch (const SetupError& e) {
      none = e.what();
    }
  }
  return std::nullopt;
}

// What a checkpoint says about the run itself: configuration, arguments, output position,
// newest row and counters (continue_counts reads the last two back).
checkpoint::Checkpoint checkpoint_of(const config::RunConfig& config, const CosimOptions& options,
                                     const CosimResult& result, const ResultFiles& files,
                                     const ResultRow& row, const StepCounts& counts,
                                     double reached) {
  checkpoint::Checkpoint c;
  c.last_row = row.values;
  c.last_row_time = row.time;
  c.last_row_pending = row.pending;
  c.time = reached;
  c.accepted_steps = counts.accepted;
  c.rejected_steps = counts.rejected;
  c.accepted_by_kappa.assign(counts.by_kappa.begin(), counts.by_kappa.end());
  c.time_by_kappa.assign(result.time_by_kappa.begin(), result.time_by_kappa.end());
  c.config_path = std::filesystem::absolute(config.path).string();
  c.config_text = config.text;
  c.arguments = options.arguments;
  c.csv_path = std::filesystem::absolute(result.csv_path).string();
  // ResultFiles refuses checkpoints of an HDF5 result: both CSVs exist here.
  c.csv_bytes = files.results_csv()->bytes();
  c.csv_rows = files.results_csv()->rows();
  c.steps_bytes = files.steps_csv()->bytes();
  c.steps_rows = files.steps_csv()->rows();
  return c;
}

// Where the run stands for the progress line and the metadata: the step counts, the newest
// accepted time and the last plan.
struct RunPosition {
  StepCounts counts;
  double reached = 0.0;
  double last_h = 0.0;
  int last_kappa = 0;

  // The pipeline's progress observer: every attempt, accepted or not.
  void attempted(const StepRecord& r) {
    const control::StepPlan& plan = r.plan;
    const bool accepted = r.accepted;
    if (accepted) {
      reached = plan.t_end;
    } else {
      ++counts.rejected;
    }
    last_h = plan.h();
    last_kappa = plan.kappa;
  }
  // The accepted-point observer's share: the counts and the time per degree (the initial point,
  // step 0, counts nothing).
  void accepted(const AcceptedPoint& p, CosimResult& result) {
    if (p.step == 0) return;
    counts.accepted = p.step;
    ++counts.by_kappa[static_cast<std::size_t>(p.kappa)];
    result.time_by_kappa[static_cast<std::size_t>(p.kappa)] += p.h;
  }
  std::string status() const {
    return fmt::format("H = {:.3e} s, kappa {}, {} accepted, {} rejected", last_h, last_kappa,
                       counts.accepted, counts.rejected);
  }
};

// Completes the result file (the pending row, close) and records in `result` and `meta` where it
// ends: first as the file is, should the last row fail to reach it (a full disk).
void complete_result_file(const char* status, Clock::time_point start, ResultFiles& files,
                          ResultRow& row, CosimResult& result, json& meta) {
  const auto record = [&] {
    result.rows = files.results().rows();
    result.wall_ns = ns_since(start);
    meta["status"] = status;
    meta["output"]["rows"] = result.rows;
    meta["simulation"]["reached_time"] = result.final_time;
  };
  record();
  if (row.pending) row.flush();
  files.close_tables();
  record();
}

// The metadata of a run that stopped with `e` (its files completed as far as they go).
void write_failed_metadata(const std::exception& e, json statistics, const CosimResult& result,
                           ResultFiles& files, json& meta) {
  meta["statistics"] = std::move(statistics);
  // run_scheme filled result.run up to the failure (time breakdown included).
  meta["time"] = time_breakdown_json(result.run.time, result.wall_ns);
  meta["error"] = failure_json(e);
  files.write_metadata_after_failure(meta);
}

void write_completed_metadata(json statistics, const CosimResult& result, double t_end,
                              ResultFiles& files, json& meta) {
  add_completed_statistics(result.run, t_end, statistics);
  meta["statistics"] = std::move(statistics);
  meta["time"] = time_breakdown_json(result.run.time, result.wall_ns);
  files.write_metadata(meta);
}

// The coupled system of `config` (and its models), with every check that needs the built system,
// and the scheme's options for it: SetupError before any file is written. May narrow `settings`
// (a joint's order limit).
system::CoupledSystem checked_system(const config::RunConfig& config, CosimSettings& settings,
                                     std::vector<library::ModelDescription>& models,
                                     SchemeOptions& scheme_options) {
  // The master's copy of the model and every run of the subsystems (a chain segment has at
  // most two inputs).
  check_memory(config, 1 + runs_per_subsystem(settings, 2));
  system::CoupledSystem system = coupled_system(config, models);
  check_constraint_combination(config, system, settings);
  scheme_options = settings.scheme;
  scheme_options.approximations = coupling_approximations(settings, system);
  check_sequence(config, settings, system);
  check_feedthrough_combination(config, settings, system);
  return system;
}

}  // namespace

CosimResult run_cosimulation(const config::RunConfig& config, const CosimOptions& options) {
  const auto start = Clock::now();
  CosimResult result;

  // ---- setup: everything that can be the user's fault happens before integration ----
  result.settings = resolve_cosim(config, options);
  const CosimSettings& settings = result.settings;
  const double t_end = settings.end_time;
  const int output_every = settings.cosim.output_every;

  std::vector<library::ModelDescription> models;
  SchemeOptions scheme_options;
  const system::CoupledSystem system =
      checked_system(config, result.settings, models, scheme_options);
  const std::vector<OutputColumn> outputs = output_columns(config, system);
  std::vector<std::size_t> state_offset;
  result_columns(config, system, outputs, settings.all_states, result.columns, state_offset);
  result.coupling_count = system.coupling_count();
  ResultFiles files({&config, false, options.output_file, result.columns, system.subsystem_count(),
                     options.resume, settings.checkpoint_every.has_value()});
  result.csv_path = files.result_path();
  result.json_path = files.json_path();
  result.steps_path = files.steps_path();

  json meta = run_metadata(config, options, system, result);

  // ---- the run ----
  std::unique_ptr<executors::Executor> executor;
  ResultRow row(files.results(), result);
  RunPosition at;
  at.last_h = settings.scheme.control.h;
  StepCounts& counts = at.counts;
  if (options.resume != nullptr) continue_counts(*options.resume, result, row, counts, at.reached);
  std::string no_checkpoint;  // why a signal finds no checkpoint to write (run_checkpoints)
  std::optional<RunCheckpoints> checkpoints =
      run_checkpoints(settings, result, files, counts.accepted, no_checkpoint);
  const auto on_accepted = [&](const AcceptedPoint& p) {
    const auto t0 = Clock::now();
    at.accepted(p, result);
    // The state is valid here: the executor has accepted it.
    fill_row(p, system, outputs, settings.all_states ? executor.get() : nullptr, state_offset,
             row.values);
    row.time = p.time;
    row.pending = true;
    result.output_ns += ns_since(t0);
    if (p.step % static_cast<std::uint64_t>(output_every) == 0 || p.time >= t_end) row.flush();
    if (options.on_accepted) options.on_accepted(p);
  };
  ProgressLine progress(options.progress, t_end);
  const auto status = [&at] { return at.status(); };
  std::vector<double> step_values;
  const auto on_progress = [&](const StepRecord& r) {
    at.attempted(r);
    const auto t0 = Clock::now();
    steps_row(r, step_values);
    files.steps()->write_row(static_cast<double>(r.attempt), step_values);
    result.output_ns += ns_since(t0);
    progress.update(at.reached, status);
  };
  // Between macro steps: a checkpoint when one is due (and a final one when a signal asks the run
  // to stop), then the stop itself; the accepted point is in the row by then.
  Continuation continuation;
  continuation.between_steps = [&](const control::MacroStepController& ctl,
                                   const MacroStepScheme& scheme) {
    const int signal = options.stop != nullptr ? options.stop->load() : 0;
    if (checkpoints && !ctl.finished()) {  // throws RunInterrupted after a final checkpoint
      const auto t0 = Clock::now();
      checkpoints->between_steps(
          signal, counts.accepted, at.reached,
          [&] { return checkpoint_of(config, options, result, files, row, counts, at.reached); },
          ctl, scheme, *executor);
      result.output_ns += ns_since(t0);
    }
    if (signal != 0) throw RunInterrupted(signal, at.reached, {}, no_checkpoint);
  };
  if (options.resume != nullptr) {
    continuation.controller_state = &options.resume->controller;
    continuation.scheme_state = &options.resume->scheme;
    continuation.attempts = counts.accepted + counts.rejected;
  }

  const auto statistics_so_far = [&] {
    return step_statistics(counts, result, at.reached, executor.get(), config);
  };
  const auto finish = [&](const char* status) {
    complete_result_file(status, start, files, row, result, meta);
  };

  try {
    const std::vector<double> u0 = system.initial_couplings();
    executor = make_executor(settings, system, models, u0, meta, result.placement);
    if (options.resume != nullptr) {
      restore_subsystems(*options.resume, options.checkpoint_path, *executor);
    }
    const std::unique_ptr<MacroStepScheme> scheme = make_scheme(scheme_options);
    run_scheme(system, *executor, *scheme, scheme_options, on_accepted, on_progress, result.run,
               continuation);
    progress.finish(at.reached, status);
  } catch (const std::exception& e) {
    progress.finish(at.reached, status);
    try {
      finish(dynamic_cast<const RunInterrupted*>(&e) != nullptr ? "interrupted" : "failed");
    } catch (const output::OutputError&) {
      // The original failure matters more; the JSON below still records it.
    }
    write_failed_metadata(e, statistics_so_far(), result, files, meta);
    if (dynamic_cast<const ContinuationMismatch*>(&e) != nullptr) {
      throw checkpoint::CheckpointError(fmt::format("{}: {}", options.checkpoint_path, e.what()));
    }
    throw;
  }
  finish("completed");
  write_completed_metadata(statistics_so_far(), result, t_end, files, meta);
  return result;
}

namespace {

// "process executor (one process per subsystem, ...)" or "in-process executor, ..." with the
// threads that run a step's nominal and extra runs.
std::string executor_description(const CosimSettings& s) {
  const int n = s.executor.threads;
  const std::string threads = fmt::format("{} thread{}", n, n == 1 ? "" : "s");
  if (s.cosim.executor == config::ExecutorKind::kProcesses) {
    return fmt::format("process executor (one process per subsystem, {} each)",
                       n == 0 ? std::string("threads on all its PUs") : threads);
  }
  if (s.cosim.executor == config::ExecutorKind::kMpi) {
    return fmt::format("MPI bridge (node agents drive one process per subsystem, {} each)",
                       n == 0 ? std::string("threads on all its PUs") : threads);
  }
  return fmt::format("in-process executor, {}", n == 0 ? std::string("all cores") : threads);
}

}  // namespace

// "scheme: implicit, fd Jacobian, tau 0.33, ..." (iterative schemes).
void print_iterative_scheme(std::ostream& out, const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const std::string how = c.scheme == config::CosimScheme::kWaveform
                              ? fmt::format("omega {}", c.omega)
                              : fmt::format("{} Jacobian", config::to_string(c.jacobian));
  const std::string step =
      c.fixed_step()
          ? fmt::format("fixed H = {} s, kappa = {}", m.h, m.kappa_fixed)
          : fmt::format("{} estimator, {}, Gamma {}", config::to_string(c.estimator),
                        c.effective_order().automatic
                            ? fmt::format("order control (kappa <= {})", m.order.kappa_max)
                            : fmt::format("fixed kappa = {}", c.effective_order().kappa),
                        m.step.safety);
  fmt::print(out,
             "scheme: {}, {}, tau {}, at most {} corrector passes, perturbation_min {}; {}; rtol "
             "{:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, atol_u {:.3g}\n",
             config::to_string(c.scheme), how, c.tau, c.max_corrector_passes, c.perturbation_min,
             step, m.tolerances.rtol, m.tolerances.atol_pos, m.tolerances.atol_vel,
             m.tolerances.atol_u);
}

namespace {

// What runs: the model, the scheme, the subsystems' solvers, the approximation and jumps.
void print_setup(std::ostream& out, const config::RunConfig& config, const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const std::size_t ns = config::subsystem_count(config);
  if (config.system_description) {
    std::vector<std::string> names;
    for (const auto& sub : config.system_description->subsystems) names.push_back(sub.name);
    fmt::print(out, "co-simulation of {}: {} subsystems ({}), t = 0 .. {} s\n", config.path, ns,
               fmt::join(names, ", "), s.end_time);
  } else {
    fmt::print(out, "co-simulation of {}: chain of {} masses in {} subsystems, t = 0 .. {} s\n",
               config.path, config.chain.masses, ns, s.end_time);
  }
  if (c.iterative()) {
    print_iterative_scheme(out, s);
  } else if (const auto& gs = s.scheme.gauss_seidel) {
    std::vector<std::size_t> sequence;
    for (std::size_t i = 0; i < ns; ++i)
      sequence.push_back(gs->sequence.empty() ? i + 1 : gs->sequence[i] + 1);
    fmt::print(out,
               "scheme: Gauss-Seidel, subsystems in the order {}, fixed H = {} s, kappa = {}, {} "
               "predictor (METHODS §3.2)\n",
               fmt::join(sequence, ", "), m.h, m.kappa_fixed, config::to_string(c.predictor));
  } else if (c.fixed_step()) {
    fmt::print(out, "scheme: explicit Jacobi, fixed H = {} s (exH), kappa = {}, {} predictor\n",
               m.h, m.kappa_fixed, config::to_string(c.predictor));
  } else {
    const config::OrderSetting order = c.effective_order();
    fmt::print(out,
               "scheme: explicit Jacobi, {} estimator, {}, rtol {:.3g}, atol_pos {:.3g}, atol_vel "
               "{:.3g}, atol_u {:.3g}, Gamma {}, {} predictor\n",
               config::to_string(c.estimator),
               order.automatic ? fmt::format("order control ({}, kappa <= {})",
                                             config::to_string(c.order_strategy), m.order.kappa_max)
                               : fmt::format("fixed kappa = {}", order.kappa),
               m.tolerances.rtol, m.tolerances.atol_pos, m.tolerances.atol_vel, m.tolerances.atol_u,
               m.step.safety, config::to_string(c.predictor));
  }
  fmt::print(out, "subsystems: IDA, rtol {:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, {}; {}\n",
             s.executor.solver.rtol, s.executor.solver.atol_pos, s.executor.solver.atol_vel,
             s.executor.solver.linear_solver == ida::LinearSolver::kDense ? "dense LU" : "KLU",
             executor_description(s));
  for (std::size_t i = 0; i < s.executor.subsystem_solvers.size(); ++i) {
    if (config.subsystem_solvers[i].empty()) continue;
    const ida::IntegratorOptions& o = s.executor.subsystem_solvers[i];
    fmt::print(out,
               "  {}: own IDA settings, rtol {:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, {}, "
               "max order {}\n",
               config.system_description->subsystems[i].name, o.rtol, o.atol_pos, o.atol_vel,
               o.linear_solver == ida::LinearSolver::kDense ? "dense LU" : "KLU", o.max_order);
  }
  const bool per_connection =
      std::any_of(s.connection_approximations.begin(), s.connection_approximations.end(),
                  [](const std::string& a) { return !a.empty(); });
  if (!c.approximation.is_lagrange() || per_connection) {
    fmt::print(out, "approximation: {}{}\n", c.approximation.name,
               per_connection ? " (some connections name their own)" : "");
  }
  if (c.jump_handling != config::JumpHandling::kKeep || c.min_micro_steps > 0) {
    fmt::print(out, "input jumps at macro points: {} history{}\n",
               config::to_string(c.jump_handling),
               c.min_micro_steps > 0 ? fmt::format(", micro steps <= H/{}", c.min_micro_steps)
                                     : std::string());
  }
}

}  // namespace

void print_summary(std::ostream& out, const config::RunConfig& config, const CosimResult& r) {
  const CosimSettings& s = r.settings;
  const std::size_t ns = config::subsystem_count(config);
  print_setup(out, config, s);

  const std::size_t nc = r.coupling_count;
  const std::size_t first_u = r.columns.size() - nc;
  fmt::print(out, "coupling variables at t = {} s:\n", r.final_time);
  const std::size_t shown = std::min<std::size_t>(nc, 8);
  for (std::size_t j = 0; j < shown; ++j) {
    fmt::print(out, "  {:>10} = {:.10g}\n", r.columns[first_u + j], r.final_values[first_u + j]);
  }
  if (shown < nc) fmt::print(out, "  ... ({} more)\n", nc - shown);

  const control::MacroStepStatistics& st = r.run.steps;
  fmt::print(out,
             "macro steps {} accepted, {} rejected (failed-step ratio {:.2f} %), mean H {:.4g} s, "
             "H {:.4g} .. {:.4g} s\n",
             st.accepted, st.rejected,
             st.accepted > 0
                 ? 100.0 * static_cast<double>(st.rejected) / static_cast<double>(st.accepted)
                 : 0.0,
             r.run.mean_h(), st.h_min, st.h_max);
  std::string histogram;
  for (int k = 0; k <= control::kMaxKappa; ++k) {
    const auto n = st.accepted_by_kappa[static_cast<std::size_t>(k)];
    if (n == 0) continue;
    histogram += fmt::format("{}kappa {}: {:.1f} % of steps, {:.1f} % of time",
                             histogram.empty() ? "" : "; ", k,
                             100.0 * static_cast<double>(n) / static_cast<double>(st.accepted),
                             100.0 * r.time_by_kappa[static_cast<std::size_t>(k)] / s.end_time);
  }
  fmt::print(out, "order histogram: {}\n", histogram.empty() ? "-" : histogram);
  const TimeBreakdown& t = r.run.time;
  if (r.run.corrector.attempts > 0) {
    const CorrectorStatistics& k = r.run.corrector;
    fmt::print(out,
               "corrector: {} passes after {} predictors (mean {:.2f}, max {}), {} interface "
               "Jacobians, {} convergence failures; perturbed runs {:.3f} s vs nominal runs "
               "{:.3f} s (summed over subsystems)\n",
               k.passes, k.attempts, k.mean_passes(), k.max_passes, k.jacobian_evaluations,
               st.corrector_failures, seconds(t.extra_runs_ns), 1e-9 * nominal_ns(r.run));
  }
  if (r.run.consistent_update.output_evaluations > 0) {
    const ConsistentUpdateStatistics& c = r.run.consistent_update;
    fmt::print(out,
               "consistent update (D-1): {} Newton steps, {} output evaluations ({} subsystem "
               "evaluations)\n",
               c.newton_iterations, c.output_evaluations, c.subsystem_evaluations);
  }
  std::string micro;
  for (std::size_t i = 0; i < ns; ++i) {
    micro += fmt::format("{}{}", i == 0 ? "" : ", ", r.run.subsystem_stats[i].steps);
  }
  fmt::print(out, "micro steps per subsystem: {}\n", micro);
  // Seed 000 §4.4: solver = max_L sum_N T_LN, idle = sum_N max_L T_LN - solver (Eq. 4.5).
  fmt::print(out, "time [s]  {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8}\n", "solver", "idle",
             "extra runs", "interface", "snapshot", "output", "total", "wall");
  fmt::print(
      out, "          {:>8.3f} {:>8.3f} {:>10.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}\n",
      seconds(t.solver_ns), seconds(t.idle_ns), seconds(t.extra_runs_ns), seconds(t.interface_ns),
      seconds(t.snapshot_ns), seconds(t.observer_ns), seconds(t.total_ns), seconds(r.wall_ns));
  if (r.settings.cosim.executor != config::ExecutorKind::kInProcess) {
    fmt::print(out,
               "communication [s]: {:.3f} (send to reply minus worker time, slowest subsystem)\n",
               seconds(t.communication_ns));
  }
  fmt::print(out, "wrote {} ({} rows x {} columns + time) and {}\n", r.csv_path, r.rows,
             r.columns.size(), r.json_path);
  if (r.steps_path != r.csv_path) {
    fmt::print(out, "per-attempt diagnostics: {}\n", r.steps_path);
  } else {
    fmt::print(out, "per-attempt diagnostics: {} /steps\n", r.steps_path);
  }
  if (!r.placement.empty()) fmt::print(out, "{}", r.placement);
}

}  // namespace macrostep::run
