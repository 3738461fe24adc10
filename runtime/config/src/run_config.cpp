#include "macrostep/config/run_config.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "chain_lowering.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/library/chain.hpp"
#include "system_config.hpp"
#include "toml_node.hpp"

namespace macrostep::config {

ConfigError::ConfigError(std::string file, unsigned line, std::string key_path,
                         const std::string& problem)
    : std::runtime_error(fmt::format("{}{}: {}{}", file, line > 0 ? fmt::format(":{}", line) : "",
                                     key_path.empty() ? "" : detail::clipped(key_path, 100) + ": ",
                                     problem)),
      file_(std::move(file)),
      line_(line),
      key_path_(std::move(key_path)) {}

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

// Upper bounds that only protect against typos that would exhaust memory or disk.
constexpr std::int64_t kMaxMasses = 100'000'000;
// Larger files are refused unread: a configuration is kilobytes (this stops /dev/zero too).
constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;

// A [[model.force]] with coupling_bodies = true, resolved once the partition is known.
struct PendingCouplingSelection {
  std::size_t force_index;
  std::string file;
  unsigned line;
  std::string path;
};

struct ParseState {
  RunConfig& config;
  std::vector<PendingCouplingSelection> pending;
  const Node* top = nullptr;  // the document, for sections that read more than their own key
};

enum class Domain { kAny, kPositive, kNonNegative };

std::string fmt_number(double v) {
  return fmt::format("{}", v);
}

double checked(const Node& n, Domain domain) {
  const double v = n.number();
  if (domain == Domain::kPositive && !(v > 0.0)) {
    n.fail(fmt::format("must be > 0 (got {})", n.source_text()));
  }
  if (domain == Domain::kNonNegative && !(v >= 0.0)) {
    n.fail(fmt::format("must be >= 0 (got {})", n.source_text()));
  }
  return v;
}

double at_least(const Node& n, double lower) {
  const double v = n.number();
  if (!(v >= lower)) n.fail(fmt::format("must be >= {} (got {})", lower, n.source_text()));
  return v;
}

std::int64_t integer_in(const Node& n, std::int64_t lo, std::int64_t hi, std::string_view hi_name) {
  const std::int64_t v = n.integer();
  if (v < lo) n.fail(fmt::format("must be >= {} (got {})", lo, v));
  if (v > hi) {
    n.fail(hi_name.empty() ? fmt::format("must be <= {} (got {})", hi, v)
                           : fmt::format("must be <= {} = {} (got {})", hi_name, hi, v));
  }
  return v;
}

// [a, b] of a uniform / signed_uniform table entry.
std::pair<double, double> bounds(const Node& n) {
  const auto items = n.elements();
  if (items.size() != 2) {
    n.fail(fmt::format("must be an array of two numbers [a, b] (got {} element{})", items.size(),
                       items.size() == 1 ? "" : "s"));
  }
  const double a = items[0].number();
  const double b = items[1].number();
  if (a > b)
    n.fail(fmt::format("lower bound must not exceed upper bound (got {})", n.source_text()));
  return {a, b};
}

constexpr std::string_view kValueForms =
    "a number or an inline table {uniform = [a, b]}, {signed_uniform = [a, b]} or {linear = a}";

library::ValueSpec parse_value(const Node& n, Domain domain) {
  if (n.is_number()) {
    return library::ValueSpec::fixed(checked(n, domain));
  }
  if (!n.is_table()) n.fail(fmt::format("must be {} (got {})", kValueForms, n.describe()));
  n.allow_only({"uniform", "signed_uniform", "linear"});
  const auto entries = n.entries();
  if (entries.size() != 1) {
    n.fail("must have exactly one of the keys uniform, signed_uniform, linear");
  }
  const auto& [kind, child] = entries.front();
  const char* sign_rule = domain == Domain::kPositive ? "> 0" : ">= 0";
  if (kind == "linear") {
    // a * i with i >= 1 has the sign of a.
    return library::ValueSpec::linear(checked(child, domain));
  }
  const auto [a, b] = bounds(child);
  if (kind == "uniform") {
    if ((domain == Domain::kPositive && !(a > 0.0)) ||
        (domain == Domain::kNonNegative && !(a >= 0.0))) {
      child.fail(
          fmt::format("every drawn value must be {} (got {})", sign_rule, child.source_text()));
    }
    return library::ValueSpec::uniform(a, b);
  }
  if (domain != Domain::kAny) {
    child.fail(fmt::format("a random sign is not allowed here: the value must be {}", sign_rule));
  }
  if (a < 0.0) {
    child.fail(fmt::format("magnitude bounds must be >= 0 (got {})", child.source_text()));
  }
  return library::ValueSpec::signed_uniform(a, b);
}

// x0 / v0: a value, or an explicit array of one number per mass.
void parse_initial(const Node& n, std::size_t masses, library::ValueSpec& spec,
                   std::vector<double>& values) {
  if (!n.is_array()) {
    spec = parse_value(n, Domain::kAny);
    return;
  }
  const auto items = n.elements();
  if (items.size() != masses) {
    n.fail(fmt::format("must have one entry per mass: model.masses = {} (got {} entries)", masses,
                       items.size()));
  }
  values.clear();
  for (const auto& item : items) values.push_back(item.number());
  spec = library::ValueSpec::fixed(0.0);
}

// Inclusive 1-based range first..last (last defaults to first) within 1..upper.
std::pair<std::size_t, std::size_t> index_range(const Node& n, std::size_t upper,
                                                std::string_view upper_name) {
  const Node first_node = n.require("first");
  const auto first = integer_in(first_node, 1, static_cast<std::int64_t>(upper), upper_name);
  auto last = first;
  if (auto last_node = n.find("last")) {
    last = integer_in(*last_node, 1, static_cast<std::int64_t>(upper), upper_name);
    if (last < first) last_node->fail(fmt::format("must be >= first = {} (got {})", first, last));
  }
  return {static_cast<std::size_t>(first), static_cast<std::size_t>(last)};
}

void parse_element(const Node& n, library::ElementSpec& e) {
  n.expect_table();
  n.allow_only({"c", "d", "C", "D", "ex", "ev", "modulation"});
  const library::ElementLaw law = detail::element_law(n);
  e.c = law.c;
  e.d = law.d;
  e.C = law.C;
  e.D = law.D;
  e.ex = law.ex;
  e.ev = law.ev;
  if (auto m = n.find("modulation")) {
    m->expect_table();
    m->allow_only({"amplitude", "omega", "period"});
    e.modulation_amplitude = m->require("amplitude").number();
    e.modulation_omega = m->require("omega").number();
    e.modulation_period = static_cast<std::size_t>(
        integer_in(m->require("period"), 1, std::numeric_limits<std::int64_t>::max(), ""));
  }
}

void parse_mass_overrides(const Node& n, library::ChainSpec& chain) {
  for (const auto& item : table_array(n)) {
    item.allow_only({"first", "last", "mass"});
    const auto [first, last] = index_range(item, chain.masses, "model.masses");
    const double mass = checked(item.require("mass"), Domain::kPositive);
    chain.mass_overrides.push_back({first, last, mass});
  }
}

void parse_element_overrides(const Node& n, library::ChainSpec& chain) {
  const std::size_t elements = chain.masses + 1;
  for (const auto& item : table_array(n)) {
    item.allow_only({"first", "last", "c", "d", "C", "D", "ex", "ev"});
    const auto [first, last] = index_range(item, elements, "model.masses + 1");
    if (chain.left == library::EndCondition::kFree && first == 1) {
      item.require("first").fail("element 1 is the free left end (left_end = \"free\")");
    }
    if (chain.right == library::EndCondition::kFree && last == elements) {
      const auto last_node = item.find("last");
      (last_node ? *last_node : item.require("first"))
          .fail(fmt::format("element {} is the free right end (right_end = \"free\")", elements));
    }
    const detail::ElementKeys keys = detail::element_keys(item);
    if (!keys.any()) item.fail("overrides nothing: give at least one of c, d, C, D, ex, ev");
    library::ElementOverride o;
    o.first = first;
    o.last = last;
    o.c = keys.c;
    o.d = keys.d;
    o.C = keys.C;
    o.D = keys.D;
    o.ex = keys.ex;
    o.ev = keys.ev;
    chain.element_overrides.push_back(o);
  }
}

void parse_selection(const Node& n, std::size_t force_index, ParseState& state,
                     library::MassSelection& selection) {
  const std::vector<std::string_view> kinds = {"masses", "fraction", "all", "coupling_bodies"};
  std::optional<std::pair<std::string, Node>> chosen;
  for (const auto& [key, child] : n.entries()) {
    if (std::find(kinds.begin(), kinds.end(), key) == kinds.end()) continue;
    if (chosen) {
      child.fail(
          fmt::format("conflicts with '{}': give exactly one of masses, fraction, all, "
                      "coupling_bodies",
                      chosen->first));
    }
    chosen.emplace(key, child);
  }
  if (!chosen) n.fail("needs exactly one selection: masses, fraction, all or coupling_bodies");
  const auto& [kind, child] = *chosen;
  const std::size_t masses = state.config.chain.masses;
  if (kind == "masses") {
    selection.kind = library::MassSelection::Kind::kList;
    std::set<std::size_t> seen;
    const auto items = child.elements();
    if (items.empty()) child.fail("must list at least one mass");
    for (const auto& item : items) {
      const auto index = static_cast<std::size_t>(
          integer_in(item, 1, static_cast<std::int64_t>(masses), "model.masses"));
      if (!seen.insert(index).second) item.fail(fmt::format("mass {} is listed twice", index));
      selection.masses.push_back(index);
    }
  } else if (kind == "fraction") {
    selection.kind = library::MassSelection::Kind::kFraction;
    selection.fraction = child.number();
    if (selection.fraction < 0.0 || selection.fraction > 1.0) {
      child.fail(fmt::format("must be in [0, 1] (got {})", child.source_text()));
    }
  } else {
    if (!child.boolean()) {
      child.fail(
          fmt::format("must be true when given (false selects nothing; give one of "
                      "masses, fraction, all, coupling_bodies)"));
    }
    if (kind == "all") {
      selection.kind = library::MassSelection::Kind::kAll;
    } else {
      // Resolved after [partition] is read; see resolve_coupling_selections().
      selection.kind = library::MassSelection::Kind::kList;
      state.pending.push_back({force_index, child.file(), child.line(), child.path()});
    }
  }
}

void parse_force(const Node& n, std::size_t force_index, ParseState& state) {
  library::ForceGroupSpec f;
  const std::string type =
      n.require("type").choice({"harmonic", "contact", "impulse", "modified_sine"});
  std::vector<std::string_view> allowed = {
      "type", "masses", "fraction", "all", "coupling_bodies", "alternate_sign", "amplitude"};
  if (type == "harmonic") {
    f.type = library::ForceType::kHarmonic;
    allowed.insert(allowed.end(), {"omega", "phase"});
  } else if (type == "contact") {
    f.type = library::ForceType::kContact;
    allowed.insert(allowed.end(), {"stiffness"});
  } else if (type == "impulse") {
    f.type = library::ForceType::kImpulse;
    allowed.insert(allowed.end(), {"time", "times", "duration", "edge"});
  } else {
    f.type = library::ForceType::kModifiedSine;
    allowed.insert(allowed.end(), {"omega", "phase", "exponent"});
  }
  n.allow_only(allowed, fmt::format(" for a {} force", type));
  parse_selection(n, force_index, state, f.selection);
  f.amplitude = parse_value(n.require("amplitude"), Domain::kAny);
  if (auto v = n.find("alternate_sign")) f.alternate_sign = v->boolean();

  switch (f.type) {
    case library::ForceType::kHarmonic:
    case library::ForceType::kModifiedSine:
      f.omega = parse_value(n.require("omega"), Domain::kAny);
      if (auto v = n.find("phase")) f.phase = parse_value(*v, Domain::kAny);
      if (auto v = n.find("exponent")) {
        f.exponent =
            static_cast<double>(integer_in(*v, 1, std::numeric_limits<std::int64_t>::max(), ""));
      }
      break;
    case library::ForceType::kContact:
      f.stiffness = parse_value(n.require("stiffness"), Domain::kPositive);
      break;
    case library::ForceType::kImpulse: {
      const auto time = n.find("time");
      const auto times = n.find("times");
      if (time && times) times->fail("conflicts with 'time': give exactly one of time, times");
      if (!time && !times) n.fail("missing required key 'time' or 'times'");
      if (time) f.time = parse_value(*time, Domain::kNonNegative);
      if (times) {
        const auto items = times->elements();
        if (items.empty()) times->fail("must list at least one time");
        for (const auto& item : items) f.times.push_back(checked(item, Domain::kNonNegative));
      }
      f.duration = checked(n.require("duration"), Domain::kPositive);
      if (auto v = n.find("edge")) f.edge = checked(*v, Domain::kPositive);
      break;
    }
  }
  state.config.chain.forces.push_back(std::move(f));
}

void parse_model(const Node* node, ParseState& state) {
  if (node == nullptr) {
    if (state.top->has("subsystem")) return;  // a system description instead of the chain
    if (const auto c = state.top->find("connection")) {
      c->fail("connects subsystems, but there is no [[subsystem]] table");
    }
    throw ConfigError(state.config.path, 0, "model",
                      "missing required table [model] (or describe a system with [[subsystem]] "
                      "and [[connection]])");
  }
  if (state.top->has("subsystem") && !detail::describes_chain_segments(*state.top)) {
    state.top->require("subsystem")
        .fail(
            "a [[subsystem]] description and a [model] chain exclude each other, unless the "
            "subsystems are model = \"chain_segment\"s of the chain; give one");
  }
  const Node& n = *node;
  n.expect_table();
  n.allow_only({"type", "masses", "seed", "mass", "left_end", "right_end", "x0", "v0", "element",
                "mass_override", "element_override", "force"});
  if (auto t = n.find("type")) t->choice({"chain"});
  library::ChainSpec& chain = state.config.chain;
  chain.masses = static_cast<std::size_t>(integer_in(n.require("masses"), 1, kMaxMasses, ""));
  if (auto v = n.find("seed")) {
    chain.seed =
        static_cast<std::uint64_t>(integer_in(*v, 0, std::numeric_limits<std::int64_t>::max(), ""));
  }
  if (auto v = n.find("mass")) chain.mass = parse_value(*v, Domain::kPositive);
  const auto end = [](const Node& e) {
    return e.choice({"fixed", "free"}) == "free" ? library::EndCondition::kFree
                                                 : library::EndCondition::kFixed;
  };
  if (auto v = n.find("left_end")) chain.left = end(*v);
  if (auto v = n.find("right_end")) chain.right = end(*v);
  if (auto v = n.find("x0")) parse_initial(*v, chain.masses, chain.x0, chain.x0_values);
  if (auto v = n.find("v0")) parse_initial(*v, chain.masses, chain.v0, chain.v0_values);
  parse_element(n.require("element"), chain.element);
  if (auto v = n.find("mass_override")) parse_mass_overrides(*v, chain);
  if (auto v = n.find("element_override")) parse_element_overrides(*v, chain);
  if (auto v = n.find("force")) {
    const auto items = table_array(*v);
    for (std::size_t i = 0; i < items.size(); ++i) parse_force(items[i], i, state);
  }
}

// [[subsystem]] with the [[connection]] tables (system_config.cpp).
void parse_subsystems(const Node* node, ParseState& state) {
  if (node == nullptr) {
    if (const auto c = state.top->find("connection")) {
      c->fail("connects subsystems, but there is no [[subsystem]] table");
    }
    return;
  }
  const auto connections = state.top->find("connection");
  // Chain segments cut the [model] chain: realize it now (the [[subsystem]]s name its masses).
  std::shared_ptr<const library::ChainParameters> chain;
  if (state.top->has("model")) {
    if (!state.pending.empty()) {
      const auto& p = state.pending.front();
      throw ConfigError(p.file, p.line, p.path,
                        "selects the bodies next to the cuts of [partition], which the "
                        "[[subsystem]] chain segments replace: name them with masses = [...]");
    }
    try {
      chain =
          std::make_shared<const library::ChainParameters>(library::realize(state.config.chain));
    } catch (const std::invalid_argument& e) {
      throw ConfigError(state.config.path, 0, "model", e.what());
    }
  }
  state.config.system_description = detail::parse_system(
      *node, connections ? &*connections : nullptr, chain, state.config.subsystem_solvers);
}

// [[connection]] is read with [[subsystem]] above.
void parse_connections(const Node*, ParseState&) {}

void check_subsystem_limit(const Node& n, std::size_t subsystems) {
  if (subsystems > kMaxSubsystems) {
    n.fail(fmt::format("too many subsystems ({}): at most {}, the process executor's limit",
                       subsystems, kMaxSubsystems));
  }
}

void parse_partition(const Node* node, ParseState& state) {
  if (state.config.system_description) {
    if (node != nullptr) {
      node->fail(
          "cuts a [model] chain; a [[subsystem]] description is partitioned by its subsystems");
    }
    return;
  }
  const std::size_t masses = state.config.chain.masses;
  auto& boundaries = state.config.partition.boundaries;
  if (node == nullptr) {
    boundaries = {0, masses};
    return;
  }
  const Node& n = *node;
  n.expect_table();
  state.config.partition.line = n.line();
  n.allow_only({"subsystems", "sizes"});
  const auto subsystems = n.find("subsystems");
  const auto sizes = n.find("sizes");
  if (subsystems && sizes) {
    (subsystems->line() > sizes->line() ? *subsystems : *sizes)
        .fail("give exactly one of subsystems, sizes");
  }
  if (subsystems) {
    const auto s = integer_in(*subsystems, 1, static_cast<std::int64_t>(masses), "model.masses");
    check_subsystem_limit(*subsystems, static_cast<std::size_t>(s));
    boundaries = library::equal_partition(masses, static_cast<std::size_t>(s));
  } else if (sizes) {
    std::vector<std::size_t> list;
    std::size_t sum = 0;
    const auto items = sizes->elements();
    if (items.empty()) sizes->fail("must list at least one subsystem size");
    check_subsystem_limit(*sizes, items.size());
    for (const auto& item : items) {
      list.push_back(static_cast<std::size_t>(
          integer_in(item, 1, static_cast<std::int64_t>(masses), "model.masses")));
      sum += list.back();
    }
    if (sum != masses) {
      sizes->fail(fmt::format("sizes sum to {}, but model.masses = {}", sum, masses));
    }
    boundaries = library::sized_partition(masses, list);
  } else {
    n.fail("needs one of subsystems, sizes");
  }
}

void parse_solver(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  node->expect_table();
  std::vector<std::string_view> keys = detail::kSolverKeys;
  keys.push_back("micro_step_stop");  // the whole run's: not a [[subsystem]] key
  node->allow_only(keys);
  state.config.solver = with_override(state.config.solver, detail::solver_keys(*node));
  if (auto v = node->find("micro_step_stop")) {
    state.config.solver.micro_step_stop =
        *parse_micro_step_stop(v->choice(micro_step_stop_names()));
    state.config.solver.micro_step_stop_line = v->line();
  }
}

void parse_simulation(const Node* node, ParseState& state) {
  const Node& n = *node;
  n.expect_table();
  n.allow_only({"end_time", "output_interval"});
  SimulationConfig& s = state.config.simulation;
  const Node end_time = n.require("end_time");
  s.end_time = checked(end_time, Domain::kPositive);
  if (s.end_time < kMinEndTime) {
    end_time.fail(fmt::format("must be at least {:g} s (got {:g})", kMinEndTime, s.end_time));
  }
  const Node interval = n.require("output_interval");
  s.output_interval = checked(interval, Domain::kPositive);
  const double rows = s.end_time / s.output_interval;
  if (rows > kMaxOutputRows) {
    interval.fail(fmt::format("gives {:.3g} output rows over end_time = {}; at most {:.3g}", rows,
                              fmt_number(s.end_time), kMaxOutputRows));
  }
}

void parse_output(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only({"file", "all_states", "checkpoint_every", "checkpoint"});
  OutputConfig& o = state.config.output;
  if (auto v = n.find("file")) {
    o.file = v->string();
    if (o.file.empty()) v->fail("must not be empty");
  }
  if (auto v = n.find("all_states")) o.all_states = v->boolean();
  if (auto v = n.find("checkpoint_every")) {
    // Seconds as a number, or the command line's text ("30s", "500steps").
    if (!v->is_string() && !v->is_number()) {
      v->fail(fmt::format(
          "must be seconds (a number) or a string such as \"30s\" or \"500steps\" (got {})",
          v->describe()));
    }
    o.checkpoint_every = v->is_string() ? v->string() : v->source_text();
    if (!v->is_string()) (void)checked(*v, Domain::kPositive);
    if (o.checkpoint_every.empty()) v->fail("must not be empty");
    o.checkpoint_every_line = v->line();
  }
  if (auto v = n.find("checkpoint")) {
    o.checkpoint = v->string();
    if (o.checkpoint.empty()) v->fail("must not be empty");
    o.checkpoint_line = v->line();
  }
}

void parse_executor(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only({"handshake_timeout", "ranks"});
  if (auto v = n.find("handshake_timeout")) {
    const double seconds = checked(*v, Domain::kPositive);
    if (seconds > 1e6) v->fail(fmt::format("must be <= 1e6 s (got {})", v->source_text()));
    state.config.executor.handshake_timeout = seconds;
  }
  if (auto v = n.find("ranks")) {
    auto& ranks = state.config.executor.ranks;
    for (const auto& item : v->elements()) {
      ranks.push_back(static_cast<int>(integer_in(item, 1, 1 << 20, "")));
    }
    if (ranks.empty()) v->fail("must name a rank per subsystem (got an empty list)");
    state.config.executor.ranks_line = v->line();
  }
}

void parse_description(const Node* node, ParseState& state) {
  if (node != nullptr) state.config.description = node->string();
}

// A string among `allowed`; `hints` explain common mistakes (value, hint).
std::string choice_with_hints(
    const Node& n, const std::vector<std::string_view>& allowed,
    const std::vector<std::pair<std::string_view, std::string_view>>& hints) {
  const std::string s = n.string();
  if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  for (const auto& [value, hint] : hints) {
    if (s == value) {
      n.fail(fmt::format("\"{}\" {} (allowed: {})", detail::clipped(s, 80), hint,
                         detail::quoted_list(allowed)));
    }
  }
  n.fail(fmt::format("must be one of {} (got \"{}\")", detail::quoted_list(allowed),
                     detail::clipped(s, 80)));
}

// order_strategy: the strategies a file chooses between ("fixed" is what order = K implies).
std::vector<std::string_view> chosen_order_strategies() {
  std::vector<std::string_view> names = control::order_strategy_names();
  std::erase(names, control::to_string(control::OrderStrategy::kFixed));
  return names;
}

// executor: the executors a file names (the MPI bridge is chosen under mpirun only).
std::vector<std::string_view> file_executor_names() {
  std::vector<std::string_view> names = executor_names();
  std::erase(names, to_string(ExecutorKind::kMpi));
  return names;
}

// The keys of the iterative schemes (METHODS §4, §9); each only where it has a meaning.
void read_corrector_keys(const Node& n, CosimConfig& c) {
  for (const char* key : {"jacobian", "tau", "max_corrector_passes", "perturbation_min", "omega"}) {
    if (auto v = n.find(key); v && !c.iterative()) {
      v->fail(
          "belongs to the iterative schemes (scheme = \"implicit\", \"semi-implicit\" or "
          "\"waveform\"); the explicit scheme has no corrector");
    }
    if (n.find(key)) c.corrector_keys_given = true;
  }
  c.jacobian_given = n.find("jacobian").has_value();
  c.omega_given = n.find("omega").has_value();
  if (auto v = n.find("jacobian")) {
    if (c.scheme == CosimScheme::kWaveform) {
      v->fail("waveform relaxation needs no interface Jacobian (METHODS §4.6)");
    }
    c.jacobian = v->choice(corrector::JacobianRegistry::instance().names());
  }
  if (auto v = n.find("tau")) c.tau = checked(*v, Domain::kPositive);
  if (auto v = n.find("max_corrector_passes")) {
    c.max_corrector_passes = static_cast<int>(integer_in(*v, 1, 100, ""));
  }
  if (auto v = n.find("perturbation_min")) c.perturbation_min = checked(*v, Domain::kPositive);
  if (auto v = n.find("omega")) {
    if (c.scheme != CosimScheme::kWaveform) v->fail("applies only to scheme = \"waveform\"");
    c.omega = checked(*v, Domain::kPositive);
    if (c.omega >= 1.0) v->fail(fmt::format("must be in (0, 1) (got {})", v->source_text()));
  }
}

// The [cosim] keys one by one (each checked on its own).
// A name that polynomials::parse_approximation accepts.
polynomials::Approximation approximation(const Node& v) {
  try {
    return polynomials::parse_approximation(v.string());
  } catch (const std::invalid_argument& e) {
    v.fail(e.what());
  }
}

// sequence = [2, 1]: Gauss–Seidel's order, 1-based subsystem numbers, each at most once (that it
// names every subsystem is checked where the system is built).
void read_sequence(const Node& v, CosimConfig& c) {
  if (c.scheme != CosimScheme::kGaussSeidel) v.fail("applies only to scheme = \"gauss-seidel\"");
  if (!v.is_array()) {
    v.fail(fmt::format("must be an array of subsystem numbers (1-based; got {})", v.describe()));
  }
  c.sequence.clear();
  for (const Node& item : v.elements()) {
    const auto i = static_cast<std::size_t>(
        integer_in(item, 1, static_cast<std::int64_t>(kMaxSubsystems), "the subsystem limit"));
    if (std::find(c.sequence.begin(), c.sequence.end(), i - 1) != c.sequence.end()) {
      item.fail(fmt::format("subsystem {} appears twice", i));
    }
    c.sequence.push_back(i - 1);
  }
  if (c.sequence.empty()) v.fail("must name the subsystems in the order they run");
  c.sequence_line = v.line();
}

void read_cosim_keys(const Node& n, CosimConfig& c) {
  if (auto v = n.find("scheme")) {
    c.scheme = *parse_scheme(v->choice(scheme_names()));
  }
  c.estimator = default_estimator(c.scheme);
  if (auto v = n.find("estimator")) {
    const std::string e = choice_with_hints(
        *v, control::estimator_names(),
        {{"exH", "is the fixed macro step: write estimator = \"none\" with step_size = H"}});
    c.estimator = *control::parse_estimator(e);
    c.estimator_given = true;
    if (!estimator_fits(c.scheme, c.estimator)) {
      const std::string allowed = detail::quoted_list(fitting_estimator_names(c.scheme));
      v->fail(fmt::format("\"{}\" does not belong to scheme = \"{}\" (allowed: {}{})", e,
                          to_string(c.scheme), allowed,
                          c.scheme == CosimScheme::kGaussSeidel ? " (METHODS D-10)" : ""));
    }
  }
  read_corrector_keys(n, c);
  const auto order = n.find("order");
  if (order) {
    if (order->is_string()) {
      if (order->string() != "auto") {
        order->fail(fmt::format("must be \"auto\" or an integer 0..{} (got \"{}\")", kMaxCosimOrder,
                                detail::clipped(order->string(), 80)));
      }
      c.order = OrderSetting::auto_order();
    } else if (order->is_integer()) {
      c.order = OrderSetting::fixed(static_cast<int>(integer_in(*order, 0, kMaxCosimOrder, "")));
    } else {
      order->fail(fmt::format("must be \"auto\" or an integer 0..{} (got {})", kMaxCosimOrder,
                              order->describe()));
    }
  }
  const auto strategy = n.find("order_strategy");
  if (strategy) {
    c.order_strategy = *control::parse_order_strategy(strategy->choice(chosen_order_strategies()));
  }
  const auto step = n.find("step_size");
  if (step) c.step_size = checked(*step, Domain::kPositive);
  if (auto v = n.find("rtol")) {
    c.rtol = checked(*v, Domain::kPositive);
    if (c.rtol >= 1.0) v->fail(fmt::format("must be < 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("atol_pos")) c.atol_pos = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_vel")) c.atol_vel = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_u")) c.atol_u = checked(*v, Domain::kPositive);
  if (auto v = n.find("safety")) c.safety = checked(*v, Domain::kPositive);
  if (auto v = n.find("r_min")) {
    c.r_min = checked(*v, Domain::kPositive);
    if (c.r_min > 1.0) v->fail(fmt::format("must be <= 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("r_max")) c.r_max = at_least(*v, 1.0);
  if (auto v = n.find("dead_zone")) c.dead_zone = v->boolean();
  const auto h_max = n.find("h_max");
  if (h_max) c.h_max = checked(*h_max, Domain::kPositive);
  const auto predictor = n.find("predictor");
  if (predictor) {
    c.predictor = *parse_predictor(predictor->choice(predictor_names()));
  }
  if (auto v = n.find("approximation")) c.approximation = approximation(*v);
  const auto points = n.find("least_squares_points");
  if (points) {
    c.least_squares_points = static_cast<int>(integer_in(*points, 2, kMaxLeastSquaresPoints, ""));
  }
  if (auto v = n.find("jump_handling")) {
    c.jump_handling = *runner::parse_jump_policy(v->choice(runner::jump_policy_names()));
  }
  if (auto v = n.find("min_micro_steps")) {
    c.min_micro_steps = static_cast<int>(integer_in(*v, 0, 1000, ""));
    if (c.min_micro_steps == 1) {
      v->fail("must be 0 (no limit) or 2..1000 (got 1: one micro step per macro step is no limit)");
    }
  }
  if (auto v = n.find("output_every")) {
    c.output_every =
        static_cast<int>(integer_in(*v, 1, std::numeric_limits<std::int32_t>::max(), ""));
  }
  if (auto v = n.find("sequence")) read_sequence(*v, c);
  if (auto v = n.find("executor")) {
    const std::string e = choice_with_hints(
        *v, file_executor_names(),
        {{"mpi",
          "is chosen on the command line of an MPI job (mpirun -np R macrostep run "
          "CONFIG --executor mpi)"}});
    c.executor = *config::parse_executor(e);
    c.executor_given = true;
  }
  if (auto v = n.find("threads")) c.threads = static_cast<int>(integer_in(*v, 0, 4096, ""));
}

// The [cosim] keys against each other and against [simulation].
void check_cosim_combinations(const Node& n, const CosimConfig& c, const ParseState& state) {
  const auto order = n.find("order");
  const auto strategy = n.find("order_strategy");
  const auto step = n.find("step_size");
  const auto h_max = n.find("h_max");
  const auto points = n.find("least_squares_points");
  if (c.fixed_step()) {
    if (!step) {
      n.require("estimator")
          .fail("\"none\" (a fixed macro step) needs the step size: give cosim.step_size = H");
    }
    if (order && c.order->automatic) {
      order->fail(
          "\"auto\" (order control) needs an error estimator; with estimator = \"none\" give "
          "the fixed degree, an integer 0..5");
    }
    for (const char* key : {"rtol", "atol_pos", "atol_vel", "atol_u", "safety", "r_min", "r_max",
                            "dead_zone", "h_max", "order_strategy"}) {
      const std::string_view k = key;
      // The corrector's convergence test of an iterative scheme, and Gauss–Seidel's settling of
      // a subsystem whose law reads its own outputs, use these even at fixed H.
      const bool weights = c.iterative() || c.scheme == CosimScheme::kGaussSeidel;
      if (weights && (k == "rtol" || k == "atol_pos" || k == "atol_vel" || k == "atol_u")) {
        continue;
      }
      if (auto v = n.find(key)) {
        v->fail(
            "belongs to the macro-step controller, and estimator = \"none\" (a fixed step) has "
            "none; remove it or choose an estimator");
      }
    }
    const double rows = state.config.simulation.end_time / (*c.step_size * c.output_every);
    if (rows > kMaxOutputRows) {
      step->fail(fmt::format(
          "gives {:.3g} output rows over end_time = {} (at most {:.3g}); raise output_every", rows,
          fmt_number(state.config.simulation.end_time), kMaxOutputRows));
    }
  } else {
    if (strategy && !c.effective_order().automatic) {
      strategy->fail(fmt::format(
          "applies only to order = \"auto\"; order = {} is a fixed degree without order control",
          c.order->kappa));
    }
    if (h_max && step && *c.h_max < *c.step_size) {
      h_max->fail(fmt::format("must be >= step_size = {} (got {})", fmt_number(*c.step_size),
                              h_max->source_text()));
    }
  }
  if (points) {
    if (c.predictor != PredictorKind::kLeastSquares) {
      points->fail("applies only to predictor = \"least_squares\"");
    }
    const int highest = c.highest_order();
    if (c.least_squares_points <= highest + 1) {
      points->fail(fmt::format(
          "must be > {} + 1 = {} (got {}): the fit needs more points than the degree-{} "
          "polynomial has coefficients",
          c.effective_order().automatic ? "kappa_max" : "order", highest + 1,
          c.least_squares_points, highest));
    }
  }
}

void parse_cosim(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only({"scheme",
                "estimator",
                "order",
                "order_strategy",
                "step_size",
                "rtol",
                "atol_pos",
                "atol_vel",
                "atol_u",
                "safety",
                "r_min",
                "r_max",
                "dead_zone",
                "h_max",
                "predictor",
                "least_squares_points",
                "approximation",
                "jump_handling",
                "min_micro_steps",
                "output_every",
                "sequence",
                "executor",
                "threads",
                "jacobian",
                "tau",
                "max_corrector_passes",
                "perturbation_min",
                "omega"});
  CosimConfig& c = state.config.cosim;
  c.given = true;
  c.line = n.line();
  read_cosim_keys(n, c);
  check_cosim_combinations(n, c, state);
  if (auto v = n.find("approximation")) {
    const std::string problem = approximation_problem(c.approximation, c);
    if (!problem.empty()) v->fail(problem);
  }
}

// Each [[connection]]'s own approximation against [cosim] (which is parsed after them).
void check_connection_approximations(const ParseState& state) {
  const RunConfig& config = state.config;
  if (!config.system_description) return;
  const auto& connections = config.system_description->connections;
  for (std::size_t k = 0; k < connections.size(); ++k) {
    if (connections[k].approximation.empty()) continue;
    const std::string problem = approximation_problem(
        polynomials::parse_approximation(connections[k].approximation), config.cosim);
    if (!problem.empty()) {
      throw ConfigError(config.path, connections[k].approximation_line,
                        fmt::format("connection[{}].approximation", k + 1), problem);
    }
  }
}

void resolve_coupling_selections(ParseState& state) {
  // A subsystem of one mass has that mass next to two cuts: it is selected once.
  std::vector<std::size_t> bodies;
  for (std::size_t body : state.config.partition.coupling_bodies()) {
    if (bodies.empty() || bodies.back() != body) bodies.push_back(body);
  }
  for (const auto& p : state.pending) {
    if (bodies.empty()) {
      throw ConfigError(p.file, p.line, p.path,
                        "selects no masses: the partition has one subsystem, so there is no cut");
    }
    state.config.chain.forces[p.force_index].selection.masses = bodies;
  }
}

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
    {"description", false, false, parse_description},
    {"model", false, true, parse_model},  // or [[subsystem]]: checked by parse_model
    {"subsystem", false, false, parse_subsystems},
    {"connection", false, false, parse_connections},
    {"partition", false, true, parse_partition},
    {"solver", false, true, parse_solver},
    {"simulation", true, true, parse_simulation},
    {"output", false, true, parse_output},
    {"cosim", false, true, parse_cosim},
    {"executor", false, true, parse_executor},
};

}  // namespace

namespace detail {

SolverOverride solver_keys(const Node& n) {
  SolverOverride s;
  if (auto v = n.find("rtol")) {
    s.rtol = checked(*v, Domain::kPositive);
    if (*s.rtol >= 1.0) v->fail(fmt::format("must be < 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("atol_pos")) s.atol_pos = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_vel")) s.atol_vel = checked(*v, Domain::kPositive);
  if (auto v = n.find("linear_solver")) {
    s.linear_solver = *ida::parse_linear_solver(v->choice(ida::linear_solver_names()));
  }
  if (auto v = n.find("max_order")) s.max_order = static_cast<int>(integer_in(*v, 1, 5, ""));
  if (auto v = n.find("max_steps")) {
    s.max_steps =
        static_cast<long>(integer_in(*v, 1, std::numeric_limits<std::int32_t>::max(), ""));
  }
  return s;
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

RunConfig parse_config(std::string_view text, const std::string& path) {
  detail::prescan(text, path);
  const detail::Document document(text, path);

  RunConfig config;
  config.path = path;
  config.text = std::string(text);
  const Node top = document.root();
  ParseState state{config, {}, &top};
  std::vector<std::string_view> keys;
  for (const auto& s : kSections) keys.push_back(s.key);
  top.allow_only(keys);
  for (const auto& s : kSections) {
    const auto node = top.find(s.key);
    if (!node && s.required) {
      throw ConfigError(
          path, 0, std::string(s.key),
          s.table ? fmt::format("missing required table [{}]", s.key) : "missing required key");
    }
    s.parse(node ? &*node : nullptr, state);
  }
  resolve_coupling_selections(state);
  if (!config.system_description) {
    const auto model = top.find("model");
    detail::lower_chain(config, model ? model->require("masses").line() : 0);
  }
  check_connection_approximations(state);
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

RunConfig load_config(const std::string& path) {
  return parse_config(read_config_file(path), path);
}

library::ChainParameters realize_chain(const RunConfig& config) {
  if (!config.system_description || !config.system_description->chain) {
    throw ConfigError(config.path, 0, "subsystem",
                      "the file describes a system of subsystems, not a [model] chain");
  }
  return *config.system_description->chain->params;
}

std::string approximation_problem(const polynomials::Approximation& a, const CosimConfig& c) {
  using polynomials::ApproximationKind;
  if (a.is_lagrange()) return "";
  if (c.iterative()) {
    return fmt::format(
        "\"{}\" applies to the explicit scheme only (scheme = \"{}\"): the iterative schemes "
        "extrapolate with Lagrange polynomials (METHODS D-7, D-8)",
        a.name, to_string(c.scheme));
  }
  if (c.predictor == PredictorKind::kLeastSquares) {
    return fmt::format("\"{}\" does not combine with predictor = \"least_squares\"", a.name);
  }
  const bool continuous = a.kind == ApproximationKind::kC0 || a.kind == ApproximationKind::kC1;
  if (continuous) {
    if (c.estimator != control::Estimator::kNone && c.estimator != control::Estimator::kExCV) {
      return fmt::format(
          "\"{}\" needs estimator = \"none\" (fixed H) or \"exCV\" (got \"{}\"): the "
          "state estimators assume a polynomial through the newest point (METHODS D-7)",
          a.name, to_string(c.estimator));
    }
    const OrderSetting o = c.effective_order();
    if (o.automatic || o.kappa > 3) {
      return fmt::format("\"{}\" needs a fixed degree k = order of 0..3 (seed 001; got {})", a.name,
                         o.automatic ? std::string("\"auto\"") : std::to_string(o.kappa));
    }
    return "";
  }
  if (c.estimator != control::Estimator::kNone) {
    return fmt::format(
        "\"{}\" is a seed-003 set for a constant macro step: it needs estimator = \"none\" "
        "(got \"{}\"; METHODS D-8)",
        a.name, to_string(c.estimator));
  }
  return "";
}

std::optional<CosimScheme> parse_scheme(std::string_view name) {
  return model::parse_name(kCosimSchemeNames, name);
}
std::optional<PredictorKind> parse_predictor(std::string_view name) {
  return model::parse_name(kPredictorNames, name);
}
std::optional<ExecutorKind> parse_executor(std::string_view name) {
  return model::parse_name(kExecutorNames, name);
}
std::optional<MicroStepStop> parse_micro_step_stop(std::string_view name) {
  return model::parse_name(kMicroStepStopNames, name);
}

const char* to_string(CosimScheme s) {
  return model::name_of(kCosimSchemeNames, s);
}
const char* to_string(PredictorKind p) {
  return model::name_of(kPredictorNames, p);
}
const char* to_string(ExecutorKind e) {
  return model::name_of(kExecutorNames, e);
}
const char* to_string(MicroStepStop m) {
  return model::name_of(kMicroStepStopNames, m);
}

std::vector<std::string_view> scheme_names() {
  return model::names_of(kCosimSchemeNames);
}
std::vector<std::string_view> predictor_names() {
  return model::names_of(kPredictorNames);
}
std::vector<std::string_view> executor_names() {
  return model::names_of(kExecutorNames);
}
std::vector<std::string_view> micro_step_stop_names() {
  return model::names_of(kMicroStepStopNames);
}

control::Estimator default_estimator(CosimScheme s) {
  if (s == CosimScheme::kGaussSeidel) return control::Estimator::kNone;  // fixed H (D-10)
  return s == CosimScheme::kExplicit ? control::Estimator::kExMD : control::Estimator::kImMD;
}

bool estimator_fits(CosimScheme s, control::Estimator e) {
  if (e == control::Estimator::kNone) return true;
  if (s == CosimScheme::kGaussSeidel) return false;  // fixed H only (METHODS D-10)
  const bool implicit_estimator = e == control::Estimator::kImMD || e == control::Estimator::kImCV;
  return implicit_estimator == (s != CosimScheme::kExplicit);
}

std::vector<std::string_view> fitting_estimator_names(CosimScheme s) {
  const control::Estimator first = default_estimator(s);
  std::vector<std::string_view> names;
  if (first != control::Estimator::kNone) names.push_back(control::to_string(first));
  for (const auto& [e, name] : control::kEstimatorNames) {
    if (e != first && e != control::Estimator::kNone && estimator_fits(s, e)) {
      names.push_back(name);
    }
  }
  names.push_back(control::to_string(control::Estimator::kNone));
  return names;
}

std::size_t subsystem_count(const RunConfig& config) {
  return config.system_description ? config.system_description->subsystems.size() : 0;
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

std::string default_output_file(const RunConfig& config, bool reference) {
  std::filesystem::path file =
      config.output.file.empty()
          ? std::filesystem::path(std::filesystem::path(config.path).stem().string() + ".csv")
          : std::filesystem::path(config.output.file);
  if (reference) {
    file.replace_filename(file.stem().string() + ".reference" + file.extension().string());
  }
  return file.string();
}

}  // namespace macrostep::config
