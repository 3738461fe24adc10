// `macrostep sweep` (sweep_command.hpp).
#include "sweep_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "compare_command.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/nrmse.hpp"
#include "macrostep/placement/placement.hpp"
#include "run_options.hpp"
#include "usage.hpp"

extern char** environ;

namespace macrostep::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A guard against a grid that would run for ever by mistake (a list pasted twice, ...).
constexpr std::size_t kMaxCases = 10000;

// One --grid: a key and its values (each a --set VALUE).
struct Axis {
  std::string key;
  std::vector<std::string> values;
};

// One combination of the axes' values.
struct Case {
  std::string name;                 // case-001: its files in DIR
  std::vector<std::string> values;  // one per axis
  bool checkpoint_path = false;     // its configuration names a checkpoint file: one per case
};

// What a finished case gave.
struct CaseResult {
  bool ran = false;
  int exit = -1;  // exit status, or 128 + the signal that ended it
  double wall_s = 0.0;
  std::string status;  // the run's JSON status, else "refused" (exit 2) or "failed"
  std::optional<long> macro_steps, rejected, micro_steps;
  std::optional<double> mean_step, nrmse, largest_nrmse;
  std::string largest_variable, note;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string clip(std::string_view s, std::size_t n = 80) {
  return s.size() <= n ? std::string(s) : std::string(s.substr(0, n)) + "...";
}

// The positions of the commas of `text` outside brackets, braces and quoted strings, and
// whether a bracket at text[0] closes at its last character (the list is in brackets).
std::vector<std::size_t> top_level_commas(std::string_view text, bool& enclosed) {
  std::vector<std::size_t> commas;
  int depth = 0;
  char quote = 0;
  enclosed = !text.empty() && text.front() == '[';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
      if (depth == 0 && i + 1 < text.size()) enclosed = false;
    } else if (c == ',' && depth == 0) {
      commas.push_back(i);
    }
  }
  if (depth != 0 || quote != 0) enclosed = false;
  return commas;
}

// VALUES of --grid KEY=VALUES: separated by commas outside brackets, braces and quotes, the
// whole list optionally in brackets; each trimmed. Empty items are refused.
std::vector<std::string> split_values(std::string_view text, const std::string& word) {
  text = trim(text);
  bool enclosed = false;
  top_level_commas(text, enclosed);
  if (enclosed) text = trim(text.substr(1, text.size() - 2));
  const std::vector<std::size_t> commas = top_level_commas(text, enclosed);
  std::vector<std::string> values;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= commas.size(); ++i) {
    const std::size_t end = i < commas.size() ? commas[i] : text.size();
    const std::string_view value = trim(text.substr(begin, end - begin));
    if (value.empty()) {
      throw UsageError(
          fmt::format("--grid {}: an empty value; separate the values by commas "
                      "(cosim.rtol=1e-4,1e-5) or list them in brackets "
                      "(cosim.rtol=[1e-4, 1e-5])",
                      clip(word)));
    }
    values.emplace_back(value);
    begin = end + 1;
  }
  return values;
}

std::vector<Axis> parse_axes(const std::vector<std::string>& grid) {
  std::vector<Axis> axes;
  for (const auto& word : grid) {
    const std::size_t equals = word.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError(fmt::format(
          "--grid {}: must be KEY=VALUES, the values separated by commas (cosim.rtol=1e-4,1e-5) "
          "or in brackets (cosim.rtol=[1e-4, 1e-5])",
          clip(word)));
    }
    Axis axis{word.substr(0, equals),
              split_values(std::string_view(word).substr(equals + 1), word)};
    for (const auto& other : axes) {
      if (other.key == axis.key) {
        throw UsageError(
            fmt::format("--grid {}: the key is given twice; list its values once", clip(axis.key)));
      }
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

// Every combination, the first axis varying slowest.
std::vector<Case> make_cases(const std::vector<Axis>& axes) {
  std::size_t count = 1;
  for (const auto& axis : axes) {
    count *= axis.values.size();
    if (count > kMaxCases) {
      throw UsageError(fmt::format("the grid has more than {} cases", kMaxCases));
    }
  }
  const std::size_t width = std::max<std::size_t>(3, fmt::format("{}", count).size());
  std::vector<Case> cases(count);
  for (std::size_t i = 0; i < count; ++i) {
    cases[i].name = fmt::format("case-{:0{}}", i + 1, width);
    cases[i].values.resize(axes.size());
    std::size_t rest = i;
    for (std::size_t a = axes.size(); a-- > 0;) {
      cases[i].values[a] = axes[a].values[rest % axes[a].values.size()];
      rest /= axes[a].values.size();
    }
  }
  return cases;
}

// The case's edits: the sweep's --set, then one per axis.
std::vector<std::string> edits_of(const SweepArgs& args, const std::vector<Axis>& axes,
                                  const Case& c) {
  std::vector<std::string> edits = args.sets;
  for (std::size_t a = 0; a < axes.size(); ++a) edits.push_back(axes[a].key + "=" + c.values[a]);
  return edits;
}

std::string describe(const std::vector<Axis>& axes, const Case& c) {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < axes.size(); ++a) parts.push_back(axes[a].key + "=" + c.values[a]);
  return fmt::format("{}", fmt::join(parts, ", "));
}

// SIGINT, SIGTERM, SIGHUP: the first stops the sweep (the running cases get it too), a second
// ends it at once.
volatile std::sig_atomic_t g_sweep_signal = 0;

extern "C" void on_sweep_signal(int sig) {
  if (g_sweep_signal != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_sweep_signal = sig;
}

void install_sweep_handlers() {
  struct sigaction action {};
  action.sa_handler = on_sweep_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &action, nullptr);
}

// Starts `words` (argv) with stdout and stderr in `log`, in a process group of its own: a
// terminal's Ctrl-C reaches the sweep alone, which passes it on once.
pid_t spawn(const std::vector<std::string>& words, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "cannot start " + words[0]);
  return pid;
}

// The last non-empty line of `log` (a failed run's message).
std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!trim(line).empty()) last = line;
  }
  return clip(last, 200);
}

// Status and statistics of a finished case from its JSON, and its error against `reference`.
void measure(const fs::path& dir, const Case& c, const output::CsvTable* reference,
             const std::string& reference_path, output::RowWeights weights, CaseResult& r) {
  const fs::path csv = dir / (c.name + ".csv");
  std::ifstream in(dir / (c.name + ".json"));
  const auto meta = nlohmann::json::parse(in, nullptr, false);
  r.status = r.exit == kUserError ? "refused" : r.exit == 0 ? "completed" : "failed";
  if (meta.is_object()) {
    // A run that ended otherwise than it says (killed) failed.
    if (r.exit == 0 || meta.value("status", "") == "interrupted") {
      r.status = meta.value("status", r.status);
    }
    const auto& s = meta.value("statistics", nlohmann::json::object());
    if (s.contains("macro_steps")) r.macro_steps = s["macro_steps"].get<long>();
    if (s.contains("rejected")) r.rejected = s["rejected"].get<long>();
    if (s.contains("mean_step") && s["mean_step"].is_number()) r.mean_step = s["mean_step"];
    long micro = 0;
    for (const auto& sub : s.value("subsystems", nlohmann::json::array())) {
      micro += sub.value("micro_steps", 0L);
    }
    if (s.contains("subsystems")) r.micro_steps = micro;
  }
  if (r.exit != 0) r.note = last_line(dir / (c.name + ".log"));
  if (r.exit != 0 || reference == nullptr) return;
  try {
    const auto report = output::compute_nrmse(output::read_result_table(csv.string()), *reference,
                                              {csv.string(), reference_path}, weights);
    r.nrmse = report.norm;
    r.largest_nrmse = report.largest_nrmse().nrmse;
    r.largest_variable = report.largest_nrmse().name;
  } catch (const output::OutputError& e) {
    r.note = clip(e.what(), 200);
  }
}

// The running cases by process, and the sweep's progress.
struct Runner {
  const SweepArgs& args;
  const std::vector<Axis>& axes;
  const std::vector<Case>& cases;
  std::vector<CaseResult>& results;
  fs::path dir{};
  const output::CsvTable* reference = nullptr;
  output::RowWeights weights = output::RowWeights::kEqual;
  std::string executable{};
  std::size_t jobs = 1;
  std::map<pid_t, std::pair<std::size_t, Clock::time_point>> running{};
  std::size_t finished = 0;
  double finished_wall_s = 0.0;

  // ", about 12 s left" from the mean wall time of the cases so far.
  std::string time_left() const {
    const std::size_t left = cases.size() - finished;
    if (left == 0 || g_sweep_signal != 0) return "";
    const double per_case = finished_wall_s / static_cast<double>(finished);
    const double waves = std::ceil(static_cast<double>(left) / static_cast<double>(jobs));
    const double seconds = per_case * waves;
    return fmt::format(", about {:.{}f} s left", seconds, seconds < 10 ? 1 : 0);
  }

  void start(std::size_t i) {
    std::vector<std::string> words{executable, "run", args.config};
    for (const auto& edit : edits_of(args, axes, cases[i])) {
      words.push_back("--set");
      words.push_back(edit);
    }
    const std::string stem = (dir / cases[i].name).string();
    for (const char* w : {"--executor", "inprocess", "--threads", "1", "--output"}) {
      words.emplace_back(w);
    }
    words.push_back(stem + ".csv");
    if (cases[i].checkpoint_path) {
      words.emplace_back("--checkpoint");
      words.push_back(stem + ".ckpt");
    }
    // A result of an earlier sweep in DIR must not stand for this case's.
    for (const char* ext : {".csv", ".json", ".steps.csv", ".ckpt"}) fs::remove(stem + ext);
    running[spawn(words, stem + ".log")] = {i, Clock::now()};
    results[i].ran = true;
  }

  void finish(pid_t pid, int status) {
    const auto it = running.find(pid);
    if (it == running.end()) return;
    const auto [i, started] = it->second;
    running.erase(it);
    CaseResult& r = results[i];
    r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    measure(dir, cases[i], reference, args.reference, weights, r);
    ++finished;
    finished_wall_s += r.wall_s;
    std::string numbers = fmt::format("{:.2f} s", r.wall_s);
    if (r.macro_steps) numbers += fmt::format(", {} macro steps", *r.macro_steps);
    if (r.nrmse) numbers += fmt::format(", NRMSE {:.3e}", *r.nrmse);
    fmt::print(stderr, "sweep: [{}/{}] {} ({}): {}, {}{}{}\n", finished, cases.size(),
               cases[i].name, describe(axes, cases[i]), r.status, numbers,
               r.note.empty() ? "" : "; " + r.note, time_left());
  }

  // Reaps the cases that ended (WNOHANG: the loop also watches the stop flag).
  void reap() {
    int status = 0;
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) finish(pid, status);
  }
};

// A CSV field: quoted if it holds a comma, a quote or a line break.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

template <typename T>
std::string number(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string();
}

// The beginnings of summary.csv's lines up to each row's status: the header's (through
// "status,") and every case's (name and grid values, then ","). write_summary writes them, and a
// rerun recognises its own summary by them.
std::vector<std::string> summary_keys(const std::vector<Axis>& axes,
                                      const std::vector<Case>& cases) {
  std::string header = "case";
  for (const auto& axis : axes) header += "," + field(axis.key);
  std::vector<std::string> keys{header + ",status,"};
  for (const auto& c : cases) {
    std::string key = c.name;
    for (const auto& v : c.values) key += "," + field(v);
    keys.push_back(key + ",");
  }
  return keys;
}

void write_summary(const fs::path& file, const std::vector<Axis>& axes,
                   const std::vector<Case>& cases, const std::vector<CaseResult>& results,
                   bool with_reference) {
  const std::vector<std::string> keys = summary_keys(axes, cases);
  std::ofstream out(file);
  out << keys[0] << "exit_status,wall_s,macro_steps,rejected,micro_steps,mean_step";
  if (with_reference) out << ",nrmse,largest_nrmse,largest_nrmse_variable";
  out << ",result,note\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& r = results[i];
    out << keys[i + 1] << (r.ran ? field(r.status) : "not run") << ","
        << (r.ran ? fmt::format("{}", r.exit) : "") << ","
        << (r.ran ? fmt::format("{:.3f}", r.wall_s) : "") << "," << number(r.macro_steps) << ","
        << number(r.rejected) << "," << number(r.micro_steps) << "," << number(r.mean_step);
    if (with_reference) {
      out << "," << number(r.nrmse) << "," << number(r.largest_nrmse) << ","
          << field(r.largest_variable);
    }
    out << "," << field(r.ran ? cases[i].name + ".csv" : "") << "," << field(r.note) << "\n";
  }
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write the summary", file.string()));
}

// The summary as an aligned table on stdout.
void print_summary(const std::vector<Axis>& axes, const std::vector<Case>& cases,
                   const std::vector<CaseResult>& results, bool with_reference) {
  std::vector<std::vector<std::string>> rows{{"case"}};
  for (const auto& axis : axes) rows[0].push_back(axis.key);
  for (const char* h : {"status", "wall s", "macro steps"}) rows[0].emplace_back(h);
  if (with_reference) rows[0].emplace_back("NRMSE");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& r = results[i];
    std::vector<std::string> row{cases[i].name};
    row.insert(row.end(), cases[i].values.begin(), cases[i].values.end());
    row.push_back(r.ran ? r.status : "not run");
    row.push_back(r.ran ? fmt::format("{:.2f}", r.wall_s) : "");
    row.push_back(number(r.macro_steps));
    if (with_reference) row.push_back(r.nrmse ? fmt::format("{:.3e}", *r.nrmse) : "");
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t k = 0; k < row.size(); ++k) {
      line += fmt::format("{}{:<{}}", k == 0 ? "" : "  ", row[k], width[k]);
    }
    fmt::print("{}\n", trim(line));
  }
}

// Whether DIR/summary.csv lists exactly these cases (an earlier run of the same sweep).
bool same_sweep(const fs::path& summary, const std::vector<std::string>& keys) {
  std::ifstream in(summary);
  std::string line;
  std::size_t i = 0;
  while (std::getline(in, line)) {
    if (i >= keys.size() || !line.starts_with(keys[i])) return false;
    ++i;
  }
  return i == keys.size();
}

// The files of the sweep: DIR, created. A directory that exists and holds anything must be an
// earlier run of the same sweep (its summary.csv lists the same cases), whose files this one
// replaces: the cases of another grid would be left beside a summary that does not list them,
// or be replaced unasked.
fs::path prepare_dir(const SweepArgs& args, const std::vector<Axis>& axes,
                     const std::vector<Case>& cases) {
  const fs::path dir = args.dir.empty() ? fs::path(fs::path(args.config).stem().string() + ".sweep")
                                        : fs::path(args.dir);
  std::error_code ec;
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec) &&
      !same_sweep(dir / "summary.csv", summary_keys(axes, cases))) {
    throw UsageError(fmt::format(
        "--dir {}: holds the files of another sweep ({}); name another --dir or remove it first",
        dir.string(),
        fs::exists(dir / "summary.csv") ? "its summary.csv lists other cases" : "no summary.csv"));
  }
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UsageError(fmt::format("--dir {}: cannot create the directory{}", dir.string(),
                                 ec ? ": " + ec.message() : " (a file has its name)"));
  }
  return dir;
}

std::size_t jobs_of(const SweepArgs& args) {
  if (args.jobs > 0) return args.jobs;
  return std::max<std::size_t>(1, placement::current_affinity().size());
}

}  // namespace

void add_sweep_options(CLI::App& cmd, SweepArgs& args) {
  cmd.add_option("CONFIG", args.config, "run configuration (TOML)")->required();
  cmd.add_option("--grid", args.grid,
                 "KEY=VALUES: one axis of the grid, the values separated by commas "
                 "(cosim.rtol=1e-4,1e-5,1e-6) or in brackets (cosim.order=[1, 2, 3]); every "
                 "combination of the axes is one case (repeatable)")
      ->required()
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_set_option(cmd, args.sets);
  cmd.add_option("--jobs", args.jobs,
                 "cases at once, each in-process on one thread (default: the CPUs this process "
                 "may use)")
      ->check(positive_integer());
  CLI::Option* reference =
      cmd.add_option("--reference", args.reference,
                     "a result (CSV or .h5, e.g. of `macrostep reference CONFIG`) that every case "
                     "is compared with: its NRMSE in the summary");
  cmd.add_option("--weights", args.weights,
                 "how that NRMSE counts a case's rows: equal (each row alike, default) | time "
                 "(each by the time it stands for), as `macrostep compare --weights`")
      ->needs(reference);
  cmd.add_option("--dir", args.dir,
                 "the cases' results, JSON, logs and summary.csv (default <config stem>.sweep)");
}

int sweep_command(const SweepArgs& args) {
  const std::vector<Axis> axes = parse_axes(args.grid);
  std::vector<Case> cases = make_cases(axes);
  // Every case's configuration is checked before anything runs.
  for (auto& c : cases) {
    try {
      const auto config = config::load_config(args.config, edits_of(args, axes, c));
      config::check_cosimulation(config);
      c.checkpoint_path =
          !config.output.checkpoint_every.empty() && !config.output.checkpoint.empty();
    } catch (const config::ConfigError& e) {
      throw UsageError(fmt::format("{} ({}): {}", c.name, describe(axes, c), e.what()));
    }
  }
  const output::RowWeights weights = parse_row_weights(args.weights);
  std::optional<output::CsvTable> reference;
  if (!args.reference.empty()) {
    try {
      reference = output::read_result_table(args.reference);
    } catch (const output::OutputError& e) {
      throw UsageError(fmt::format("--reference: {}", e.what()));
    }
  }
  const std::size_t jobs = jobs_of(args);
  std::vector<CaseResult> results(cases.size());
  Runner runner{args, axes, cases, results};
  runner.jobs = jobs;
  runner.dir = prepare_dir(args, axes, cases);
  runner.reference = reference ? &*reference : nullptr;
  runner.weights = weights;
  runner.executable = fs::read_symlink("/proc/self/exe").string();
  fmt::print(stderr, "sweep: {} cases of {}, {} at a time, in {}\n", cases.size(), args.config,
             jobs, runner.dir.string());
  install_sweep_handlers();
  std::size_t next = 0;
  bool passed_on = false;
  while (true) {
    while (g_sweep_signal == 0 && next < cases.size() && runner.running.size() < jobs) {
      runner.start(next++);
    }
    if (runner.running.empty()) break;
    if (g_sweep_signal != 0 && !passed_on) {
      for (const auto& [pid, run] : runner.running) ::kill(pid, g_sweep_signal);
      passed_on = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    runner.reap();
  }
  write_summary(runner.dir / "summary.csv", axes, cases, results, reference.has_value());
  print_summary(axes, cases, results, reference.has_value());
  fmt::print("summary: {}\n", (runner.dir / "summary.csv").string());
  if (g_sweep_signal != 0) return 128 + g_sweep_signal;
  const bool all =
      std::all_of(results.begin(), results.end(), [](const CaseResult& r) { return r.exit == 0; });
  return all ? 0 : kRuntimeError;
}

}  // namespace macrostep::app
