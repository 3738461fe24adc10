// Reading a configuration file: the section list and its driver, the file itself, and what the
// runs ask of a loaded configuration (run_config.hpp). The sections' readers are in reader.hpp.
#include "macrostep/config/run_config.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "chain_lowering.hpp"
#include "macrostep/ssp/ssp.hpp"
#include "overrides.hpp"
#include "reader.hpp"
#include "toml_node.hpp"

namespace macrostep::config {

ConfigError::ConfigError(std::string file, unsigned line, std::string key_path,
                         const std::string& problem)
    : std::runtime_error(fmt::format("{}{}: {}{}", file, line > 0 ? fmt::format(":{}", line) : "",
                                     key_path.empty() ? "" : detail::clipped(key_path, 100) + ": ",
                                     problem)),
      file_(std::move(file)),
      line_(line),
      key_path_(std::move(key_path)),
      problem_(problem) {}

std::vector<std::size_t> PartitionConfig::coupling_bodies() const {
  std::vector<std::size_t> bodies;
  // Interior boundary b (0-based first mass of the next subsystem) cuts element b+1, between
  // the 1-based masses b and b+1.
  for (std::size_t k = 1; k + 1 < boundaries.size(); ++k) {
    bodies.push_back(boundaries[k]);
    bodies.push_back(boundaries[k] + 1);
  }
  return bodies;
}

namespace {

using detail::Node;
using detail::ParseState;

// Larger files are refused unread: a configuration is kilobytes (this stops /dev/zero too).
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// Top-level sections, parsed in this order (model before partition: the partition needs
// model.masses; coupling-body selections are resolved after both; [cosim] last, since its
// checks need [simulation]).
struct Section {
  std::string_view key;
  bool required;
  bool table;
  void (*parse)(const Node*, ParseState&);
};
constexpr Section kSections[] = {
    {"description", false, false, detail::read_description},
    {"model", false, true, detail::read_model},  // or [[subsystem]]: checked by read_model
    {"subsystem", false, false, detail::read_subsystems},
    {"connection", false, false, detail::read_connections},
    {"partition", false, true, detail::read_partition},
    {"solver", false, true, detail::read_solver},
    {"simulation", true, true, detail::read_simulation},
    {"output", false, true, detail::read_output},
    {"cosim", false, true, detail::read_cosim},
    {"executor", false, true, detail::read_executor},
};

}  // namespace

namespace detail {

KeyList section_keys() {
  KeyList keys;
  for (const auto& s : kSections) keys.push_back(s.key);
  return keys;
}

}  // namespace detail

SolverConfig with_override(SolverConfig solver, const SolverOverride& o) {
  if (o.rtol) solver.rtol = *o.rtol;
  if (o.atol_pos) solver.atol_pos = o.atol_pos;
  if (o.atol_vel) solver.atol_vel = o.atol_vel;
  if (o.linear_solver) solver.linear_solver = *o.linear_solver;
  if (o.max_order) solver.max_order = *o.max_order;
  if (o.max_steps) solver.max_steps = *o.max_steps;
  return solver;
}

namespace {

// The sections of `document` into `config`.
void read_sections(const detail::Document& document, RunConfig& config) {
  const std::string& path = config.path;
  const Node top = document.root();
  ParseState state{config, {}, &top};
  top.allow_only(detail::section_keys());
  for (const auto& s : kSections) {
    const auto node = top.find(s.key);
    if (!node && s.required) {
      throw ConfigError(
          path, 0, std::string(s.key),
          s.table ? fmt::format("missing required table [{}]", s.key) : "missing required key");
    }
    s.parse(node ? &*node : nullptr, state);
  }
  detail::resolve_coupling_selections(state);
  if (!config.system_description) {
    const auto model = top.find("model");
    detail::lower_chain(config, model ? model->require("masses").line() : 0);
  }
  detail::check_connection_approximations(state);
}

}  // namespace

namespace {

// parse_config() with relative paths resolved in `directory` if it is not null.
RunConfig parse_text(std::string_view text, const std::string& path, const std::string* directory,
                     const std::vector<std::string>& overrides) {
  detail::prescan(text, path);
  detail::Document document(text, path);
  if (directory != nullptr) document.set_directory(*directory);

  RunConfig config;
  config.path = path;
  config.text = std::string(text);
  config.overrides = detail::apply_overrides(document, overrides);
  try {
    read_sections(document, config);
  } catch (const ConfigError& e) {
    // A value of a --set has no line: name the --set instead of the file.
    if (e.line() != 0 || e.file() != path) throw;
    throw error_at(config, 0, e.key_path(), e.problem());
  }
  if (!config.overrides.empty()) {
    std::string header = fmt::format("# {} with", path);
    for (const auto& o : config.overrides) header += " --set " + o.argument;
    header = detail::clipped(header, 1000);
    std::replace_if(
        header.begin(), header.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    config.overridden_text = header + "\n" + document.render() + "\n";
  }
  return config;
}

ConfigError config_error(const ssp::SspError& e) {
  return ConfigError(e.origin().file, e.origin().line, e.origin().element, e.problem());
}

// `problem` with the package's unpacked root (as the FMU paths in messages have it) named as the
// package: "sys.ssp/resources/a.fmu" rather than a directory that is gone when the user reads it.
std::string in_package(std::string problem, const ssp::Translation& t, const std::string& path) {
  if (!t.package) return problem;
  std::error_code ignored;
  for (const std::string& root :
       {t.base_directory, std::filesystem::weakly_canonical(t.base_directory, ignored).string()}) {
    for (auto at = problem.find(root + "/"); !root.empty() && at != std::string::npos;
         at = problem.find(root + "/", at + path.size())) {
      problem.replace(at, root.size(), path);
    }
  }
  return problem;
}

// An SSP package or SSD: its TOML text read, and the problems that the TOML's checks find
// located at the SSP element the line came from.
RunConfig load_ssp(const std::string& path, const std::vector<std::string>& overrides) {
  ssp::Translation t;
  try {
    t = ssp::translate(path);
  } catch (const ssp::SspError& e) {
    throw config_error(e);
  }
  try {
    RunConfig config = parse_text(t.toml, path, &t.base_directory, overrides);
    config.files = t.package;
    return config;
  } catch (const ConfigError& e) {
    if (e.file() != path) throw;
    if (e.line() > 0 && e.line() <= t.origins.size() && !t.origins[e.line() - 1].file.empty()) {
      const ssp::Origin& o = t.origins[e.line() - 1];
      throw ConfigError(o.file, o.line, o.element, in_package(e.problem(), t, path));
    }
    if (e.line() == 0 && e.key_path() == "simulation" && !t.has_experiment) {
      throw ConfigError(path, 0, "ssd:DefaultExperiment",
                        "the SSD gives no stopTime, the end of the simulated time: add "
                        "<ssd:DefaultExperiment stopTime=\"T\"/>, or --set simulation.end_time=T "
                        "--set simulation.output_interval=DT");
    }
    throw;
  }
}

}  // namespace

RunConfig parse_config(std::string_view text, const std::string& path,
                       const std::vector<std::string>& overrides) {
  if (!ssp::is_package(path)) return parse_text(text, path, nullptr, overrides);
  std::shared_ptr<const ssp::UnpackedPackage> package;
  try {
    package = ssp::unpack(path);
  } catch (const ssp::SspError& e) {
    throw config_error(e);
  }
  RunConfig config = parse_text(text, path, &package->root(), overrides);
  config.files = std::move(package);
  return config;
}

namespace {

// The file's bytes; ConfigError with the system's reason if it cannot be read, and for a
// directory or a file larger than kMaxConfigBytes.
std::string read_config_file(const std::string& path) {
  const auto fail = [&path](const std::string& what, int err) {
    return ConfigError(path, 0, "", fmt::format("{}: {}", what, std::strerror(err)));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail("cannot open the configuration file", errno);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("cannot read the configuration file", errno);
  if (S_ISDIR(st.st_mode)) {
    throw ConfigError(path, 0, "", "is a directory, not a configuration file");
  }
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot read the configuration file", errno);
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      throw ConfigError(path, 0, "",
                        fmt::format("is larger than {} MiB; a configuration file is a few "
                                    "kilobytes (is this the right file?)",
                                    kMaxConfigBytes >> 20));
    }
  }
}

}  // namespace

RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (ssp::is_package(path) || ssp::is_description(path)) return load_ssp(path, overrides);
  return parse_text(read_config_file(path), path, nullptr, overrides);
}

library::ChainParameters realize_chain(const RunConfig& config) {
  if (!config.system_description || !config.system_description->chain) {
    throw ConfigError(config.path, 0, "subsystem",
                      "the file describes a system of subsystems, not a [model] chain");
  }
  return *config.system_description->chain->params;
}

std::size_t subsystem_count(const RunConfig& config) {
  return config.system_description ? config.system_description->subsystems.size() : 0;
}

std::vector<output::Destination> input_files(const RunConfig& config) {
  std::vector<output::Destination> files{{"the configuration", config.path}};
  if (!config.system_description) return files;
  for (const system::DescribedSubsystem& s : config.system_description->subsystems) {
    for (library::ModelFile& f : library::model_files(s.model)) {
      const auto listed = [&](const output::Destination& g) { return g.path == f.path; };
      if (std::none_of(files.begin(), files.end(), listed)) {
        files.push_back({fmt::format("the {} of subsystem {}", f.what, s.name), std::move(f.path)});
      }
    }
  }
  return files;
}

void check_cosimulation(const RunConfig& config) {
  const std::size_t subsystems = subsystem_count(config);
  if (subsystems >= 2) return;
  if (!config.system_description || !config.system_description->chain) {
    throw ConfigError(config.path, 0, "subsystem",
                      "a co-simulation needs at least two subsystems (got 1); run it whole "
                      "with --monolithic");
  }
  if (config.partition.line == 0) {
    throw ConfigError(config.path, 0, "partition",
                      "a co-simulation needs at least two subsystems, and without [partition] "
                      "the model is one; add [partition] subsystems = N (N >= 2) or run it "
                      "whole with --monolithic");
  }
  throw ConfigError(config.path, config.partition.line, "partition",
                    fmt::format("a co-simulation needs at least two subsystems (got {}); run the "
                                "whole model with --monolithic",
                                subsystems));
}

const char* to_string(ResultKind kind) {
  switch (kind) {
    case ResultKind::kCosimulation:
      return "cosimulation";
    case ResultKind::kMonolithic:
      return "monolithic";
    case ResultKind::kReference:
      return "reference";
  }
  return "cosimulation";
}

std::string default_output_file(const RunConfig& config, ResultKind kind) {
  std::filesystem::path file =
      config.output.file.empty()
          ? std::filesystem::path(std::filesystem::path(config.path).stem().string() + ".csv")
          : std::filesystem::path(config.output.file);
  if (kind != ResultKind::kCosimulation) {
    file.replace_filename(file.stem().string() + "." + to_string(kind) + file.extension().string());
  }
  return file.string();
}

}  // namespace macrostep::config
