// `macrostep suggest-partition` (suggest_partition.hpp).
#include "suggest_partition.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "macrostep/analysis/partition_search.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/schemes/cosimulation.hpp"
#include "macrostep/schemes/monolithic.hpp"

namespace macrostep::app {
namespace {

namespace fs = std::filesystem;
using analysis::PartitionModel;

// Tolerances of the sampling run against [solver]'s: its error stays far below the coupling
// errors it measures (the co-simulation's rtol is at least [solver]'s in every study).
constexpr double kSamplingTolerance = 1e-2;
constexpr std::size_t kMaxSamples = 200000;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A working directory for the trial's files, removed on every exit path.
struct TrialDirectory {
  fs::path path = fs::temp_directory_path() / fmt::format("macrostep-suggest-{}", ::getpid());
  TrialDirectory() { fs::create_directories(path); }
  ~TrialDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

struct Trial {
  analysis::TrialRun run;
  int kappa_min = 0, kappa_max = 0;  // the orders the controller may use
  double rtol = 0.0, atol_u = 0.0;
};

Trial trial_cosimulation(const config::RunConfig& config, const SuggestPartitionArgs& args,
                         double trial_time) {
  TrialDirectory dir;
  schemes::CosimOptions options;
  options.stop_time = trial_time;
  options.output_file = (dir.path / "trial.csv").string();
  options.executor = args.executor == "processes" ? config::ExecutorKind::kProcesses
                                                  : config::ExecutorKind::kInProcess;
  options.progress = schemes::MonolithicOptions::Progress::kNever;
  options.command_line = "suggest-partition trial";
  const schemes::CosimResult result = schemes::run_cosimulation(config, options);

  Trial trial;
  const schemes::SchemeResult& r = result.run;
  trial.run.duration = r.end_time;
  trial.run.attempts = static_cast<double>(r.steps.accepted + r.steps.rejected);
  double solver_ns = 0.0;
  const auto& bounds = config.partition.boundaries;
  for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
    trial.run.subsystems.push_back({bounds[j], bounds[j + 1],
                                    static_cast<double>(r.subsystem_stats[j].steps),
                                    r.subsystem_solver_ns[j] * 1e-9});
    solver_ns += r.subsystem_solver_ns[j];
  }
  // The master's share: everything outside the executor's step, plus the process executor's
  // communication inside it.
  const auto& time = r.time;
  trial.run.overhead_per_attempt_s =
      static_cast<double>(time.total_ns - time.executor_ns + time.communication_ns) * 1e-9 /
      trial.run.attempts;
  trial.run.extra_share =
      solver_ns > 0.0 ? static_cast<double>(time.extra_runs_ns) / solver_ns : 0.0;
  const config::OrderSetting order = result.settings.cosim.effective_order();
  const bool controlled = !result.settings.cosim.fixed_step() && order.automatic;
  trial.kappa_min = controlled ? 0 : std::min(order.kappa, config::kMaxCosimOrder);
  trial.kappa_max = controlled ? config::kMaxCosimOrder : trial.kappa_min;
  trial.rtol = result.settings.cosim.rtol;
  trial.atol_u = result.settings.cosim.effective_atol_u();
  return trial;
}

// N_e of every element from the whole chain in one IDA, sampled every `h` over the trial.
std::vector<double> cut_indicators(const config::RunConfig& config, const Trial& trial, double h,
                                   std::size_t samples) {
  const library::ChainParameters params = config::realize_chain(config);
  const std::size_t n = params.size();
  const library::ChainSegment chain(params, 0, n);
  ida::IntegratorOptions options = schemes::integrator_options(config.solver);
  options.rtol *= kSamplingTolerance;
  options.atol_pos *= kSamplingTolerance;
  options.atol_vel *= kSamplingTolerance;
  ida::Integrator integrator(chain, options);
  analysis::CutIndicatorSampler sampler(n + 1, trial.kappa_min, trial.kappa_max, trial.rtol,
                                        trial.atol_u);
  std::vector<double> z(2 * n), zp(2 * n), forces(n + 1, 0.0);
  for (std::size_t k = 0; k <= samples; ++k) {
    if (k > 0) integrator.advance_to(static_cast<double>(k) * h);
    integrator.state(z, zp);
    for (std::size_t e = 1; e < n; ++e)
      forces[e] = params.element[e].force(z[2 * e] - z[2 * e - 2], z[2 * e + 1] - z[2 * e - 1]);
    sampler.add(forces);
  }
  return sampler.indicators();
}

// The configuration text with [partition] replaced by `sizes = [...]`.
std::string suggested_text(const config::RunConfig& config,
                           const std::vector<std::size_t>& boundaries, const std::string& note) {
  std::istringstream in(config.text);
  std::ostringstream out;
  const std::regex header(R"(^\s*\[\[?\s*[A-Za-z_"'])");
  std::string line;
  unsigned number = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++number;
    if (number == config.partition.line) {
      out << line << '\n' << note << "sizes = " << analysis::sizes_array(boundaries) << '\n';
      inside = true;
      continue;
    }
    if (inside && std::regex_search(line, header)) inside = false;
    if (!inside) out << line << '\n';
  }
  return out.str();
}

void print_trial(const Trial& trial, const SuggestPartitionArgs& args, double wall_s) {
  const analysis::TrialRun& r = trial.run;
  fmt::print(
      "trial co-simulation of the configured partition to t = {:.4g} s ({}): {} attempts, mean H "
      "{:.3g} s; {:.1f} s\n",
      r.duration, args.executor, r.attempts, r.duration / r.attempts, wall_s);
  fmt::print("  {:>11} {:>7} {:>12} {:>16} {:>9}\n", "subsystem", "masses", "micro steps",
             "per macro step", "solver s");
  for (std::size_t j = 0; j < r.subsystems.size(); ++j) {
    const auto& s = r.subsystems[j];
    fmt::print("  {:>11} {:>7} {:>12.0f} {:>16.2f} {:>9.3f}\n", j + 1, s.last - s.first,
               s.micro_steps, s.micro_steps / r.attempts, s.solver_s);
  }
  fmt::print(
      "  master and communication {:.3g} us per attempt; extra runs {:.0f} % of the solver "
      "time\n",
      r.overhead_per_attempt_s * 1e6, 100.0 * r.extra_share);
}

void print_prediction(const PartitionModel::Prediction& own, const PartitionModel::Prediction& best,
                      const std::vector<double>& indicators, double calibration) {
  auto worst_cut = [&](const PartitionModel::Prediction& p) {
    std::size_t worst = p.boundaries[1];
    for (std::size_t j = 1; j + 1 < p.boundaries.size(); ++j)
      if (indicators[p.boundaries[j]] > indicators[worst]) worst = p.boundaries[j];
    return fmt::format("{} ({:.0f})", worst + 1, calibration * indicators[worst]);
  };
  auto largest = [](const PartitionModel::Prediction& p) {
    return *std::max_element(p.load_s.begin(), p.load_s.end());
  };
  fmt::print("\nprediction over the trial          {:>28} {:>28}\n", "configured", "suggested");
  fmt::print("  sizes                            {:>28} {:>28}\n",
             analysis::sizes_array(own.boundaries), analysis::sizes_array(best.boundaries));
  fmt::print("  roughest cut: element (N_e)      {:>28} {:>28}\n", worst_cut(own), worst_cut(best));
  fmt::print("  macro steps                      {:>28.0f} {:>28.0f}\n", own.macro_steps,
             best.macro_steps);
  fmt::print("  largest subsystem load [s]       {:>28.3f} {:>28.3f}\n", largest(own),
             largest(best));
  fmt::print("  idle share                       {:>28.2f} {:>28.2f}\n", own.idle_share,
             best.idle_share);
  fmt::print("  wall time [s]                    {:>28.3f} {:>28.3f}\n", own.wall_s, best.wall_s);
  fmt::print("  predicted speed-up of the suggestion: {:.2f}x\n", own.wall_s / best.wall_s);
}

void print_schedule(const PartitionModel::Prediction& best, unsigned cores) {
  fmt::print("placement on {} core{} (longest first; subsystems numbered from 1):", cores,
             cores == 1 ? "" : "s");
  for (std::size_t c = 0; c < best.schedule.size(); ++c) {
    double load = 0.0;
    std::vector<std::size_t> named;
    for (std::size_t b : best.schedule[c]) {
      load += best.load_s[b];
      named.push_back(b + 1);
    }
    fmt::print(" core {}: {{{}}} {:.3f} s;", c + 1, fmt::join(named, ", "), load);
  }
  fmt::print("\n");
}

void write_indicators(const std::string& path, const std::vector<double>& indicators,
                      double calibration) {
  std::ofstream file(path);
  file << "element,left_mass,right_mass,macro_steps\n";
  for (std::size_t e = 1; e + 1 < indicators.size(); ++e)
    file << fmt::format("{},{},{},{:.6g}\n", e + 1, e, e + 1, calibration * indicators[e]);
  if (!file.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void add_suggest_partition_options(CLI::App& cmd, SuggestPartitionArgs& args) {
  cmd.add_option("CONFIG", args.config, "run configuration of a [model] chain (TOML)")->required();
  cmd.add_option("--subsystems", args.subsystems,
                 "subsystems of the suggestion (default: as many as the configuration has)");
  cmd.add_option("--trial-time", args.trial_time,
                 "simulated time of the trial runs [s] (default: a tenth of the end time)");
  cmd.add_option("--cores", args.cores,
                 "cores the subsystems will share (default: the usable PUs hwloc sees)");
  cmd.add_option("--output", args.output,
                 "the suggested configuration (default: <config stem>.suggested.toml)");
  cmd.add_option("--executor", args.executor, "of the trial co-simulation: inprocess | processes");
  cmd.add_option("--indicators", args.indicators,
                 "write every element's cut indicator to this CSV (element, masses it joins, the "
                 "macro steps a cut there would cost over the trial)");
}

int suggest_partition_command(const SuggestPartitionArgs& args) {
  if (args.executor != "inprocess" && args.executor != "processes")
    throw std::invalid_argument("--executor: inprocess or processes, not '" + args.executor + "'");
  const config::RunConfig config = config::load_config(args.config);
  if (config.system_description) {
    throw config::ConfigError(config.path, 0, "subsystem",
                              "suggest-partition cuts a [model] chain; a [[subsystem]] "
                              "description fixes its subsystems itself");
  }
  config::check_cosimulation(config);
  const std::size_t n = config.chain.masses;
  const std::size_t subsystems =
      args.subsystems > 0 ? args.subsystems : config::subsystem_count(config);
  if (subsystems < 2 || subsystems > n)
    throw std::invalid_argument(
        fmt::format("--subsystems: between 2 and {} (the masses), not {}", n, subsystems));
  const double end = config.simulation.end_time;
  const double trial_time = args.trial_time > 0.0 ? args.trial_time : 0.1 * end;
  if (!(trial_time > 0.0) || trial_time > end)
    throw std::invalid_argument(
        fmt::format("--trial-time: in (0, {:g}] (the end time), not {:g}", end, trial_time));
  const std::string output = !args.output.empty()
                                 ? args.output
                                 : fs::path(config.path).stem().string() + ".suggested.toml";
  if (fs::exists(output) && fs::equivalent(output, config.path))
    throw std::invalid_argument("--output: would overwrite the configuration " + config.path);
  const unsigned cores =
      args.cores > 0 ? args.cores : static_cast<unsigned>(placement::Topology::detect().pus.size());

  fmt::print("macrostep suggest-partition: {}, {} masses, {} subsystems on {} cores\n", config.path,
             n, subsystems, cores);
  auto start = std::chrono::steady_clock::now();
  const Trial trial = trial_cosimulation(config, args, trial_time);
  print_trial(trial, args, seconds_since(start));

  const auto samples = static_cast<std::size_t>(
      std::min<double>(trial.run.attempts, static_cast<double>(kMaxSamples)));
  const double h = trial.run.duration / static_cast<double>(samples);
  start = std::chrono::steady_clock::now();
  const std::vector<double> indicators = cut_indicators(config, trial, h, samples);
  fmt::print(
      "cut indicators: the whole chain in one IDA at {:g} x [solver]'s tolerances, element "
      "forces every {:.3g} s ({} samples, kappa {}..{}); {:.1f} s\n",
      kSamplingTolerance, h, samples, trial.kappa_min, trial.kappa_max, seconds_since(start));

  const PartitionModel model(trial.run, indicators, cores);
  if (!args.indicators.empty()) write_indicators(args.indicators, indicators, model.calibration());
  std::vector<std::size_t> own = config.partition.boundaries;
  const PartitionModel::Prediction configured = model.predict(own);
  const PartitionModel::Prediction best = model.search(subsystems);
  print_prediction(configured, best, indicators, model.calibration());
  print_schedule(best, cores);

  const std::string note = fmt::format(
      "# suggested by `macrostep suggest-partition` from a trial to t = {:.4g} s; predicted "
      "{:.2f}x the configured partition {}\n",
      trial_time, configured.wall_s / best.wall_s, analysis::sizes_array(own));
  const std::string text = suggested_text(config, best.boundaries, note);
  (void)config::parse_config(text, output);  // what is written must load
  std::ofstream file(output);
  file << text;
  if (!file.flush()) throw std::runtime_error("cannot write " + output);
  fmt::print("wrote {} ([partition] sizes = {}): macrostep run {}\n", output,
             analysis::sizes_array(best.boundaries), output);
  return 0;
}

}  // namespace macrostep::app
