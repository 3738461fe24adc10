// One run of the Python package (run_call.hpp).
#include "run_call.hpp"

#include <fmt/format.h>

#include <mutex>
#include <sstream>

#include "macrostep/config/run_config.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/run/settings.hpp"

namespace macrostep::python {

namespace {

constexpr double kNsPerSecond = 1e9;

config::CosimScheme scheme_of(const std::string& name) {
  if (const auto scheme = config::parse_scheme(name)) return *scheme;
  throw ArgumentError(fmt::format("scheme='{}' is not a scheme; allowed: {}", name,
                                  model::joined_names(config::scheme_names())));
}

control::Estimator estimator_of(const std::string& name) {
  if (const auto estimator = control::parse_estimator(name)) return *estimator;
  throw ArgumentError(fmt::format("estimator='{}' is not an estimator; allowed: {}", name,
                                  model::joined_names(model::names_of(control::kEstimatorNames))));
}

config::OrderSetting order_of(const std::string& text) {
  if (text == "auto") return config::OrderSetting::auto_order();
  int kappa = -1;
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '9') kappa = text[0] - '0';
  if (kappa < 0 || kappa > config::kMaxCosimOrder) {
    throw ArgumentError(fmt::format("order must be 'auto' or an integer 0..{} (got {})",
                                    config::kMaxCosimOrder, text));
  }
  return config::OrderSetting::fixed(kappa);
}

config::ExecutorKind executor_of(const std::string& name) {
  const auto executor = config::parse_executor(name);
  if (executor && *executor != config::ExecutorKind::kMpi) return *executor;
  throw ArgumentError(fmt::format(
      "executor='{}' is not an executor of the Python package; allowed: inprocess, processes "
      "(mpi runs under mpirun: the `macrostep` command)",
      name));
}

// The words of the `macrostep run` command that asks for the same run: kept in its checkpoints,
// so that `macrostep resume` continues a Python run (a dict's text is in the checkpoint too).
std::vector<std::string> run_arguments(const RunRequest& r) {
  std::vector<std::string> words{r.config_path};
  const auto add = [&words](const char* flag, const auto& value) {
    if (!value) return;
    words.emplace_back(flag);
    words.push_back(fmt::format("{}", *value));
  };
  for (const auto& edit : r.sets) add("--set", std::optional<std::string>(edit));
  add("--stop-time", r.stop_time);
  add("--rtol", r.rtol);
  add("--step-size", r.step_size);
  add("--scheme", r.scheme);
  add("--estimator", r.estimator);
  add("--order", r.order);
  add("--executor", r.executor);
  add("--output", std::optional<std::string>(r.output));
  if (r.all_states) words.emplace_back("--all-states");
  return words;
}

run::CosimOptions cosim_options(const RunRequest& r, const run::StopFlag* stop) {
  run::CosimOptions o;
  if (r.scheme) o.scheme = scheme_of(*r.scheme);
  if (r.estimator) o.estimator = estimator_of(*r.estimator);
  if (r.order) o.order = order_of(*r.order);
  if (r.executor) o.executor = executor_of(*r.executor);
  o.rtol = r.rtol;
  o.step_size = r.step_size;
  o.stop_time = r.stop_time;
  o.output_file = r.output;
  o.replace_files = r.overwrite;
  o.all_states = r.all_states;
  o.progress = r.progress ? run::MonolithicOptions::Progress::kAlways
                          : run::MonolithicOptions::Progress::kNever;
  o.command_line = r.command_line;
  o.stop = stop;
  o.worker_executable = r.worker;
  o.arguments = run_arguments(r);
  return o;
}

// The process executor's workers are the `macrostep` command: refused before anything starts
// when the caller knows no binary (this process is Python, not macrostep).
void check_worker(const config::RunConfig& config, const run::CosimOptions& options) {
  if (!options.worker_executable.empty()) return;
  const run::CosimSettings settings = run::resolve_cosim(config, options);
  if (settings.cosim.executor != config::ExecutorKind::kProcesses) return;
  throw ArgumentError(
      "the process executor (executor='processes', the default of a configuration that names "
      "none) starts the `macrostep` command as its workers, and none was found: set "
      "MACROSTEP_BINARY to the macrostep binary of this build, or pass executor='inprocess'");
}

RunReply cosimulate(const config::RunConfig& config, const RunRequest& r,
                    const run::StopFlag* stop) {
  const run::CosimOptions options = cosim_options(r, stop);
  check_worker(config, options);
  const run::CosimResult result = run::run_cosimulation(config, options);
  std::ostringstream summary;
  run::print_summary(summary, config, result);
  return {result.csv_path,   result.json_path,
          result.steps_path, result.columns,
          result.units,      result.descriptions,
          summary.str(),     static_cast<double>(result.wall_ns) / kNsPerSecond};
}

RunReply monolithic(const config::RunConfig& config, const RunRequest& r,
                    const run::StopFlag* stop) {
  if (r.scheme || r.estimator || r.order || r.executor || r.step_size) {
    throw ArgumentError(
        "scheme, estimator, order, executor and step_size configure a co-simulation and do not "
        "apply to a monolithic or reference run");
  }
  run::MonolithicOptions options;
  options.reference = r.kind == "reference";
  if (options.reference && r.rtol) {
    throw ArgumentError("rtol does not apply to a reference run (its tolerances are fixed)");
  }
  options.stop_time = r.stop_time;
  options.rtol = r.rtol;
  options.output_file = r.output;
  options.replace_files = r.overwrite;
  options.all_states = r.all_states;
  options.progress = r.progress ? run::MonolithicOptions::Progress::kAlways
                                : run::MonolithicOptions::Progress::kNever;
  options.command_line = r.command_line;
  options.stop = stop;
  const run::MonolithicResult result = run::run_monolithic(config, options);
  std::ostringstream summary;
  run::print_summary(summary, config, options, result);
  return {result.csv_path,
          result.json_path,
          {},
          result.columns,
          result.units,
          result.descriptions,
          summary.str(),
          static_cast<double>(result.wall_ns) / kNsPerSecond};
}

std::mutex g_one_run;  // the run driver arms one crash guard per process (unexpected_end.hpp)

}  // namespace

config::RunConfig load(const std::string& config_path, const std::optional<std::string>& text,
                       const std::vector<std::string>& sets) {
  return text ? config::parse_config(*text, config_path, sets)
              : config::load_config(config_path, sets);
}

RunReply run(const RunRequest& request, const run::StopFlag* stop) {
  if (request.kind != "cosimulation" && request.kind != "monolithic" &&
      request.kind != "reference") {
    throw ArgumentError(fmt::format("unknown kind of run '{}'", request.kind));
  }
  if (request.output.empty()) throw ArgumentError("the output file must be named");
  const config::RunConfig config = load(request.config_path, request.config_text, request.sets);
  const std::lock_guard lock(g_one_run);
  if (request.kind == "cosimulation") return cosimulate(config, request, stop);
  return monolithic(config, request, stop);
}

}  // namespace macrostep::python
