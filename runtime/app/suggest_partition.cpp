// `macrostep suggest-partition` (suggest_partition.hpp).
#include "suggest_partition.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

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
#include "macrostep/output/csv.hpp"
#include "macrostep/output/destinations.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/run/observer.hpp"
#include "usage.hpp"

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

// A private working directory for the trial's files (mkdtemp, as the recovery and FMU directories
// are made), removed on every exit path.
struct TrialDirectory {
  fs::path path;
  TrialDirectory() {
    std::string pattern = (fs::temp_directory_path() / "macrostep-suggest-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a directory for the trial runs: " + pattern);
    path = pattern;
  }
  TrialDirectory(const TrialDirectory&) = delete;
  TrialDirectory& operator=(const TrialDirectory&) = delete;
  ~TrialDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// The error controller's settings that the indicators need (METHODS §6.1: exCV's W^u).
struct ErrorTest {
  int kappa_min = 0, kappa_max = 0;  // the orders the controller may use
  double rtol = 0.0, atol_u = 0.0;
};

ErrorTest error_test(const config::CosimConfig& cosim) {
  const config::OrderSetting order = cosim.effective_order();
  const bool controlled = !cosim.fixed_step() && order.automatic;
  ErrorTest t;
  t.kappa_min = controlled ? 0 : std::min(order.kappa, config::kMaxCosimOrder);
  t.kappa_max = controlled ? config::kMaxCosimOrder : t.kappa_min;
  t.rtol = cosim.rtol;
  t.atol_u = cosim.effective_atol_u();
  return t;
}

struct Trial {
  analysis::TrialRun run;
  std::vector<double> cut_indicators;  // N_e of each cut, from its coupling variable
  double wall_s = 0.0;                 // of the whole trial, start-up included
};

// Feeds the cut indicators with the coupling variables of every accepted macro point.
class CouplingSampling final : public run::RunObserver {
 public:
  explicit CouplingSampling(analysis::CutIndicatorSampler& sampler) : sampler_(sampler) {}
  void accepted(const schemes::AcceptedPoint& p) override {
    u_.assign(p.u.begin(), p.u.end());
    sampler_.add(p.time, u_);
  }

 private:
  analysis::CutIndicatorSampler& sampler_;
  std::vector<double> u_;
};

// The co-simulation of the chain cut at `boundaries` over [0, trial_time].
Trial trial_cosimulation(const config::RunConfig& configured,
                         const std::vector<std::size_t>& boundaries,
                         const SuggestPartitionArgs& args, double trial_time) {
  config::RunConfig config = configured;
  config::set_partition(config, boundaries);
  const ErrorTest test = error_test(config.cosim);
  analysis::CutIndicatorSampler sampler(boundaries.size() - 2, test.kappa_min, test.kappa_max,
                                        test.rtol, test.atol_u);
  TrialDirectory dir;
  run::CosimOptions options;
  options.stop_time = trial_time;
  options.output_file = (dir.path / "trial.csv").string();
  options.executor = config::parse_executor(args.executor);  // checked by checked_request
  options.progress = run::MonolithicOptions::Progress::kNever;
  options.command_line = "suggest-partition trial";
  CouplingSampling sampling(sampler);
  options.observers.push_back(&sampling);
  const auto start = std::chrono::steady_clock::now();
  const run::CosimResult result = run::run_cosimulation(config, options);

  Trial trial;
  trial.wall_s = seconds_since(start);
  const schemes::SchemeResult& r = result.run;
  trial.run.duration = r.end_time;
  trial.run.attempts = static_cast<double>(r.steps.accepted + r.steps.rejected);
  double solver_ns = 0.0;
  for (std::size_t j = 0; j + 1 < boundaries.size(); ++j) {
    trial.run.subsystems.push_back({boundaries[j], boundaries[j + 1],
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
  trial.cut_indicators = sampler.indicators();
  return trial;
}

// N_e of every element from the whole chain in one IDA, sampled every `h` over the trial.
std::vector<double> solution_indicators(const config::RunConfig& config, double h,
                                        std::size_t samples) {
  const library::ChainParameters params = config::realize_chain(config);
  const std::size_t n = params.size();
  const library::ChainSegment chain(params, 0, n);
  ida::IntegratorOptions options = run::integrator_options(config.solver);
  options.rtol *= kSamplingTolerance;
  options.atol_pos *= kSamplingTolerance;
  options.atol_vel *= kSamplingTolerance;
  ida::Integrator integrator(chain, options);
  const ErrorTest test = error_test(config.cosim);
  analysis::CutIndicatorSampler sampler(n + 1, test.kappa_min, test.kappa_max, test.rtol,
                                        test.atol_u);
  std::vector<double> z(2 * n), zp(2 * n), forces(n + 1, 0.0);
  for (std::size_t k = 0; k <= samples; ++k) {
    const double t = static_cast<double>(k) * h;
    if (k > 0) integrator.advance_to(t);
    integrator.state(z, zp);
    for (std::size_t e = 1; e < n; ++e)
      forces[e] = params.element[e].force(z[2 * e] - z[2 * e - 2], z[2 * e + 1] - z[2 * e - 1]);
    sampler.add(t, forces);
  }
  return sampler.indicators();
}

// The configured cuts moved by `shift` masses, every other one the opposite way if `alternate`
// (cut 1 by shift, cut 2 by -shift, ...: every other block grows, the others shrink, as seed
// 000 §5.4 restructures the multirate chain); empty if a block would vanish.
std::vector<std::size_t> shifted(const std::vector<std::size_t>& boundaries, int shift,
                                 bool alternate) {
  std::vector<std::size_t> b = boundaries;
  for (std::size_t j = 1; j + 1 < b.size(); ++j) {
    const long moved = static_cast<long>(b[j]) + ((alternate && j % 2 == 0) ? -shift : shift);
    if (moved <= static_cast<long>(b[j - 1]) || moved >= static_cast<long>(b[j + 1])) return {};
    b[j] = static_cast<std::size_t>(moved);
  }
  return b;
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

void print_trial(const Trial& trial, const SuggestPartitionArgs& args) {
  const analysis::TrialRun& r = trial.run;
  fmt::print(
      "trial co-simulation of the configured partition to t = {:.4g} s ({}): {} attempts, mean H "
      "{:.3g} s; {:.1f} s\n",
      r.duration, args.executor, r.attempts, r.duration / r.attempts, trial.wall_s);
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

// The longest-first schedule of `p`'s subsystems on the cores, and as a --pin map for the process
// executor when the cores are usable PUs of this machine (`pus`, OS indices; empty otherwise):
// the master left to the OS, each subsystem on its core's PU, sharing as scheduled.
std::string print_schedule(const PartitionModel::Prediction& p, unsigned cores,
                           const std::vector<unsigned>& pus) {
  fmt::print("placement on {} core{} (longest first; subsystems numbered from 1):", cores,
             cores == 1 ? "" : "s");
  std::vector<std::string> entries(p.load_s.size() + 1, "*");
  for (std::size_t c = 0; c < p.schedule.size(); ++c) {
    double load = 0.0;
    std::vector<std::size_t> named;
    for (std::size_t b : p.schedule[c]) {
      load += p.load_s[b];
      named.push_back(b + 1);
      if (c < pus.size()) entries[b + 1] = std::to_string(pus[c]);
    }
    fmt::print(" core {}: {{{}}} {:.3f} s;", c + 1, fmt::join(named, ", "), load);
  }
  fmt::print("\n");
  if (pus.size() < p.schedule.size()) return {};
  const std::string map = fmt::format("map:{}", fmt::join(entries, "/"));
  fmt::print("  as a placement for --executor processes: --pin {}\n", map);
  return map;
}

// N_e per element (0-based: element e joins masses e-1 and e), and whether a trial measured it.
struct Indicators {
  std::vector<double> steps;
  std::vector<bool> measured;
};

void write_indicators(const std::string& path, const Indicators& indicators, double calibration) {
  std::ofstream file(path);
  file << "element,left_mass,right_mass,macro_steps,source\n";
  for (std::size_t e = 1; e + 1 < indicators.steps.size(); ++e)
    file << fmt::format("{},{},{},{:.6g},{}\n", e + 1, e, e + 1, calibration * indicators.steps[e],
                        indicators.measured[e] ? "trial" : "solution");
  if (!file.flush()) throw std::runtime_error("cannot write " + path);
}

struct Request {
  config::RunConfig config;
  std::size_t subsystems = 0;
  double trial_time = 0.0;
  std::string output;
  unsigned cores = 1;
  std::vector<unsigned> pus;  // the first `cores` usable PUs, if the machine has that many
};

Request checked_request(const SuggestPartitionArgs& args) {
  const auto executor = config::parse_executor(args.executor);
  if (!executor || *executor == config::ExecutorKind::kMpi)
    throw std::invalid_argument("--executor: inprocess or processes, not '" + args.executor + "'");
  if (args.window < 0) throw std::invalid_argument("--window: 0 or more masses");
  Request q;
  q.config = config::load_config(args.config);
  if (!q.config.system_description->chain) {
    throw config::ConfigError(q.config.path, 0, "subsystem",
                              "suggest-partition cuts a [model] chain; a [[subsystem]] "
                              "description fixes its subsystems itself");
  }
  config::check_cosimulation(q.config);
  const std::size_t n = q.config.chain.masses;
  q.subsystems = args.subsystems > 0 ? args.subsystems : config::subsystem_count(q.config);
  if (q.subsystems < 2 || q.subsystems > n)
    throw std::invalid_argument(
        fmt::format("--subsystems: between 2 and {} (the masses), not {}", n, q.subsystems));
  const double end = q.config.simulation.end_time;
  q.trial_time = args.trial_time > 0.0 ? args.trial_time : 0.1 * end;
  if (!(q.trial_time > 0.0) || q.trial_time > end)
    throw std::invalid_argument(
        fmt::format("--trial-time: in (0, {:g}] (the end time), not {:g}", end, q.trial_time));
  q.output = !args.output.empty() ? args.output
                                  : fs::path(q.config.path).stem().string() + ".suggested.toml";
  try {  // the files it writes, checked like a run's (output/destinations.hpp)
    output::Destinations files(config::input_files(q.config));
    files.add("the suggested configuration", q.output);
    if (!args.indicators.empty()) files.add("the cut indicators", args.indicators);
  } catch (const output::OutputError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::vector<unsigned> usable = placement::Topology::detect().pu_os_indices();
  q.cores = args.cores > 0 ? args.cores : static_cast<unsigned>(usable.size());
  if (q.cores <= usable.size()) q.pus.assign(usable.begin(), usable.begin() + q.cores);
  return q;
}

// A partition that a trial co-simulated.
struct Candidate {
  std::string name;
  std::vector<std::size_t> boundaries;
  Trial trial;
};

// Trials of the configured cuts (first) and of the cuts moved by ±1 .. ±--window masses, all
// alike and alternately.
std::vector<Candidate> neighbourhood_trials(const Request& q, const SuggestPartitionArgs& args) {
  const std::vector<std::size_t>& own = q.config.partition.boundaries;
  std::vector<Candidate> trials;
  trials.push_back({"configured", own, trial_cosimulation(q.config, own, args, q.trial_time)});
  print_trial(trials.front().trial, args);
  for (const bool alternate : {false, true}) {
    for (int step = 1; step <= 2 * args.window; ++step) {
      const int shift = (step % 2 == 1 ? -1 : 1) * ((step + 1) / 2);  // -1, +1, -2, +2, ...
      std::vector<std::size_t> cuts = shifted(own, shift, alternate);
      if (cuts.empty() || (alternate && own.size() <= 3)) continue;  // one cut: no alternation
      const std::string name =
          alternate ? fmt::format("cuts moved by {:+d}, {:+d}, ... alternately", shift, -shift)
                    : fmt::format("every cut moved by {:+d}", shift);
      Trial trial = trial_cosimulation(q.config, cuts, args, q.trial_time);
      fmt::print("trial with {}: {} attempts; {:.2f} s\n", name, trial.run.attempts, trial.wall_s);
      trials.push_back({name, std::move(cuts), std::move(trial)});
    }
  }
  return trials;
}

// Every element's N_e: measured where a trial had a cut, elsewhere the solution's, scaled so that
// both agree on the configured cuts (trials.front()).
Indicators indicators_from(const Request& q, const std::vector<Candidate>& trials) {
  const std::vector<std::size_t>& own = q.config.partition.boundaries;
  const std::size_t n = q.config.chain.masses;
  Indicators ind{std::vector<double>(n + 1, 0.0), std::vector<bool>(n + 1, false)};
  for (const Candidate& c : trials) {
    for (std::size_t j = 0; j + 2 < c.boundaries.size(); ++j) {
      const std::size_t e = c.boundaries[j + 1];
      const double measured = c.trial.cut_indicators[j];
      ind.steps[e] = ind.measured[e] ? std::max(ind.steps[e], measured) : measured;
      ind.measured[e] = true;
    }
  }
  const analysis::TrialRun& configured = trials.front().trial.run;
  const auto samples = static_cast<std::size_t>(
      std::min<double>(configured.attempts, static_cast<double>(kMaxSamples)));
  const double h = configured.duration / static_cast<double>(samples);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> solution = solution_indicators(q.config, h, samples);
  const ErrorTest test = error_test(q.config.cosim);
  fmt::print(
      "solution indicators: the whole chain in one IDA at {:g} x [solver]'s tolerances, element "
      "forces every {:.3g} s ({} samples, kappa {}..{}); {:.1f} s\n",
      kSamplingTolerance, h, samples, test.kappa_min, test.kappa_max, seconds_since(start));
  double measured = 0.0, computed = 0.0;
  for (std::size_t j = 1; j + 1 < own.size(); ++j) {
    measured = std::max(measured, ind.steps[own[j]]);
    computed = std::max(computed, solution[own[j]]);
  }
  const double scale = computed > 0.0 ? measured / computed : 1.0;
  for (std::size_t e = 1; e < n; ++e)
    if (!ind.measured[e]) ind.steps[e] = scale * solution[e];
  return ind;
}

// Trials the model's cuts unless a trial had them, then writes the configuration with the
// fastest trial's cuts; writes nothing when that is the configured partition.
void write_fastest(const Request& q, const SuggestPartitionArgs& args,
                   std::vector<Candidate>& trials, const PartitionModel& model,
                   const PartitionModel::Prediction& best) {
  const auto same = [&](const Candidate& c) { return c.boundaries == best.boundaries; };
  if (std::none_of(trials.begin(), trials.end(), same)) {
    Trial check = trial_cosimulation(q.config, best.boundaries, args, q.trial_time);
    fmt::print("trial of the model's suggestion: {} attempts (predicted {:.0f}); {:.2f} s\n",
               check.run.attempts, best.macro_steps, check.wall_s);
    trials.push_back({"the model's suggestion", best.boundaries, std::move(check)});
  }
  const Candidate& configured = trials.front();
  // Only partitions of the asked size compete with the configured one.
  const Candidate* fastest = &configured;
  for (const Candidate& c : trials)
    if (c.boundaries.size() == best.boundaries.size() && c.trial.wall_s < fastest->trial.wall_s)
      fastest = &c;
  const double gain = configured.trial.wall_s / fastest->trial.wall_s;
  if (fastest == &configured) {
    fmt::print("fastest trial: the configured partition; nothing written\n");
    return;
  }
  fmt::print(
      "fastest trial: {} {}, {:.2f} s against the configured partition's {:.2f} s: {:.2f}x\n",
      fastest->name, analysis::sizes_array(fastest->boundaries), fastest->trial.wall_s,
      configured.trial.wall_s, gain);
  const std::string map = print_schedule(model.predict(fastest->boundaries), q.cores, q.pus);
  std::string note = fmt::format(
      "# suggested by `macrostep suggest-partition` from trials to t = {:.4g} s ({}; {:.2f}x "
      "faster in the trial) instead of {}\n",
      q.trial_time, fastest->name, gain, analysis::sizes_array(configured.boundaries));
  if (!map.empty()) note += fmt::format("# placement on this machine's cores: --pin {}\n", map);
  const std::string text = suggested_text(q.config, fastest->boundaries, note);
  (void)config::parse_config(text, q.output);  // what is written must load
  std::ofstream file(q.output);
  file << text;
  if (!file.flush()) throw std::runtime_error("cannot write " + q.output);
  fmt::print("wrote {} ([partition] sizes = {}): macrostep run {}\n", q.output,
             analysis::sizes_array(fastest->boundaries), q.output);
}

}  // namespace

void add_suggest_partition_options(CLI::App& cmd, SuggestPartitionArgs& args) {
  cmd.add_option("CONFIG", args.config, "run configuration of a [model] chain (TOML)")->required();
  // Given explicitly, each must be positive (0 is the default's marker, not a value).
  cmd.add_option("--subsystems", args.subsystems,
                 "subsystems of the suggestion (default: as many as the configuration has)")
      ->check(positive_integer());
  cmd.add_option("--trial-time", args.trial_time,
                 "simulated time of the trial runs [s] (default: a tenth of the end time)")
      ->check(positive_number());
  cmd.add_option("--cores", args.cores,
                 "cores the subsystems will share (default: the usable PUs hwloc sees)")
      ->check(positive_integer());
  cmd.add_option("--output", args.output,
                 "the suggested configuration (default: <config stem>.suggested.toml)");
  cmd.add_option("--executor", args.executor, "of the trial co-simulation: inprocess | processes");
  cmd.add_option("--window", args.window,
                 "also co-simulate the trial with the configured cuts moved by up to this many "
                 "masses each way, all alike and alternately (default 2; a trial each)");
  cmd.add_option("--indicators", args.indicators,
                 "write every element's cut indicator to this CSV (element, masses it joins, the "
                 "macro steps a cut there would cost over the trial)");
}

int suggest_partition_command(const SuggestPartitionArgs& args) {
  const Request q = checked_request(args);
  fmt::print("macrostep suggest-partition: {}, {} masses, {} subsystems on {} cores\n",
             q.config.path, q.config.chain.masses, q.subsystems, q.cores);
  std::vector<Candidate> trials = neighbourhood_trials(q, args);
  const Indicators indicators = indicators_from(q, trials);
  const PartitionModel model(trials.front().trial.run, indicators.steps, q.cores);
  if (!args.indicators.empty()) write_indicators(args.indicators, indicators, model.calibration());
  const PartitionModel::Prediction configured = model.predict(q.config.partition.boundaries);
  const PartitionModel::Prediction best = model.search(q.subsystems);
  print_prediction(configured, best, indicators.steps, model.calibration());
  write_fastest(q, args, trials, model, best);
  return 0;
}

}  // namespace macrostep::app
