// [[subsystem]] and [[connection]]: a coupled system of any shape (schema in
// run_config.hpp, data in system/system_description.hpp). Every check names the table element
// and key it is about, so each mistake gets one clear message before anything runs (DESIGN.md
// contract 5).
#include "system_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/polynomials/approximation.hpp"

#include "macrostep/config/run_config.hpp"
#include "macrostep/model/names.hpp"

namespace macrostep::config::detail {

namespace {

void refuse_control_characters(const Node& n, std::string_view text) {
  if (const auto at = model::control_character(text)) {
    n.fail(fmt::format("must not contain control characters (got {}, one at byte {})",
                       model::quoted(text), *at));
  }
}

}  // namespace

std::string user_name(const Node& n) {
  std::string text = n.string();
  refuse_control_characters(n, text);
  return text;
}

namespace {

using system::InputRef;
using system::OutputRef;

// ---- values ----

double positive(const Node& n) {
  const double v = n.number();
  if (!(v > 0.0)) n.fail(fmt::format("must be > 0 (got {})", n.source_text()));
  return v;
}

double non_negative(const Node& n) {
  const double v = n.number();
  if (!(v >= 0.0)) n.fail(fmt::format("must be >= 0 (got {})", n.source_text()));
  return v;
}

void read_number(const Node& table, std::string_view key, double& out) {
  if (auto v = table.find(key)) out = v->number();
}

void read_bool(const Node& table, std::string_view key, bool& out) {
  if (auto v = table.find(key)) out = v->boolean();
}

// An array of numbers with exactly `size` entries (`what` completes "one entry per ...").
std::vector<double> numbers(const Node& n, std::size_t size, std::string_view what,
                            double (*check)(const Node&) = nullptr) {
  const auto items = n.elements();
  if (items.size() != size) {
    n.fail(fmt::format("must have one entry per {} ({}, got {})", what, size, items.size()));
  }
  std::vector<double> out;
  for (const auto& item : items) out.push_back(check != nullptr ? check(item) : item.number());
  return out;
}

// ---- models ----

library::DriveTrainParameters drive_train(const Node& n) {
  n.allow_only(subsystem_keys("drive_train"), " for a drive_train");
  library::DriveTrainParameters p;
  const Node inertia = n.require("inertia");
  for (const auto& item : inertia.elements()) p.inertia.push_back(positive(item));
  if (p.inertia.empty()) inertia.fail("must list at least one inertia");
  const std::size_t count = p.inertia.size();
  if (auto v = n.find("shaft")) {
    const auto shafts = table_array(*v);
    if (shafts.size() != count - 1) {
      v->fail(fmt::format("must list one shaft between neighbouring inertias ({}, got {})",
                          count - 1, shafts.size()));
    }
    for (const auto& s : shafts) {
      s.allow_only(keys_of(Table::kShaft));
      p.shaft.push_back(element_law(s));
    }
  } else if (count > 1) {
    n.fail(
        fmt::format("missing required key 'shaft' ({} shafts join {} inertias)", count - 1, count));
  }
  if (auto v = n.find("bearing_damping")) {
    p.bearing_damping = numbers(*v, count, "inertia", non_negative);
  }
  p.angle0.assign(count, 0.0);
  p.speed0.assign(count, 0.0);
  if (auto v = n.find("angle0")) p.angle0 = numbers(*v, count, "inertia");
  if (auto v = n.find("speed0")) p.speed0 = numbers(*v, count, "inertia");
  if (auto v = n.find("load")) {
    p.load.assign(count, library::LoadTorque{});
    std::vector<bool> loaded(count, false);
    for (const auto& l : table_array(*v)) {
      l.allow_only(keys_of(Table::kLoad));
      const Node index = l.require("inertia");
      const auto k = index.integer();
      if (k < 1 || k > static_cast<std::int64_t>(count)) {
        index.fail(fmt::format("must be an inertia index 1..{} (got {})", count, k));
      }
      if (loaded[static_cast<std::size_t>(k - 1)]) {
        index.fail(fmt::format("inertia {} has a load already (one entry per inertia)", k));
      }
      loaded[static_cast<std::size_t>(k - 1)] = true;
      library::LoadTorque& t = p.load[static_cast<std::size_t>(k - 1)];
      read_number(l, "constant", t.constant);
      read_number(l, "step", t.step);
      read_number(l, "step_time", t.step_time);
      if (auto w = l.find("step_width")) t.step_width = positive(*w);
    }
  }
  read_bool(n, "left_coupled", p.left_coupled);
  read_bool(n, "right_coupled", p.right_coupled);
  return p;
}

// ---- names and references ----

// A subsystem as parsed: its table, its name and the model built from it (for its variable
// names, sizes and feed-through).
struct ParsedSubsystem {
  Node node;
  std::string name;
  library::ModelDescription model;
  SolverOverride solver;
  std::unique_ptr<model::Subsystem> built;
  bool coupled = false;  // some connection reads one of its outputs or feeds one of its inputs
};

// Where a name was defined first ("subsystem[1]", line).
struct NameOwner {
  std::string path;
  unsigned line;
};

std::string checked_name(const Node& table, std::map<std::string, NameOwner>& names) {
  const Node node = table.require("name");
  std::string name = user_name(node);
  if (name.empty()) node.fail("must not be empty");
  const bool plain = std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-';
  });
  if (!plain) {
    node.fail(fmt::format(
        "must consist of ASCII letters, digits, '_' and '-' (got {}): results name columns "
        "\"<subsystem>.<variable>\"",
        model::quoted(name)));
  }
  const auto [it, inserted] = names.emplace(name, NameOwner{table.path(), table.line()});
  if (!inserted) {
    node.fail(fmt::format("\"{}\" is already the name of {} (line {})", name, it->second.path,
                          it->second.line));
  }
  return name;
}

struct Systems {
  std::vector<ParsedSubsystem> subsystems;
  std::map<std::string, NameOwner> names;  // subsystems and connections: one namespace
  std::shared_ptr<const library::ChainParameters> chain;  // the [model] chain, if any
};

// masses = [first, last] (1-based, inclusive) of the [model] chain.
library::ChainSegmentDescription chain_segment(const Node& n, const Systems& s) {
  n.allow_only(subsystem_keys("chain_segment"), " for a chain_segment");
  if (!s.chain) {
    n.require("model").fail(
        "a chain_segment cuts the [model] chain, and the file has no [model] table");
  }
  const Node masses = n.require("masses");
  const auto range = masses.elements();
  if (range.size() != 2) {
    masses.fail(fmt::format("must be [first, last], the 1-based masses of the segment (got {})",
                            masses.source_text()));
  }
  const auto size = static_cast<std::int64_t>(s.chain->size());
  const std::int64_t first = range[0].integer(), last = range[1].integer();
  if (first < 1 || last < first || last > size) {
    masses.fail(fmt::format("must satisfy 1 <= first <= last <= model.masses = {} (got {})", size,
                            masses.source_text()));
  }
  return {s.chain, static_cast<std::size_t>(first - 1), static_cast<std::size_t>(last)};
}

// Chain segments must cut the whole chain into pieces: every mass in exactly one segment (a gap
// would leave masses without equations, an overlap would integrate them twice).
void check_chain_cover(const Systems& s) {
  std::vector<const ParsedSubsystem*> segments;
  for (const auto& p : s.subsystems) {
    if (std::holds_alternative<library::ChainSegmentDescription>(p.model)) segments.push_back(&p);
  }
  if (segments.empty()) return;
  std::vector<const ParsedSubsystem*> owner(s.chain->size(), nullptr);
  for (const ParsedSubsystem* p : segments) {
    const auto& d = std::get<library::ChainSegmentDescription>(p->model);
    for (std::size_t m = d.first; m < d.last; ++m) {
      if (owner[m] != nullptr) {
        p->node.require("masses").fail(
            fmt::format("mass {} is in chain segment \"{}\" already", m + 1, owner[m]->name));
      }
      owner[m] = p;
    }
  }
  for (std::size_t m = 0; m < owner.size(); ++m) {
    if (owner[m] == nullptr) {
      segments.back()->node.fail(fmt::format(
          "mass {} of the [model] chain is in no chain segment; the segments must cut the whole "
          "chain",
          m + 1));
    }
  }
}

// "subsystem.variable" → (subsystem index, variable index); `outputs` selects the direction.
std::pair<std::size_t, std::size_t> resolve(const Node& n, const Systems& s, bool outputs) {
  const std::string text = user_name(n);
  const auto dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) {
    n.fail(fmt::format("must be \"subsystem.{}\" (got {})", outputs ? "output" : "input",
                       model::quoted(text)));
  }
  const std::string name = text.substr(0, dot), variable = text.substr(dot + 1);
  std::vector<std::string> all;
  for (std::size_t i = 0; i < s.subsystems.size(); ++i) {
    if (s.subsystems[i].name == name) {
      const model::Subsystem& m = *s.subsystems[i].built;
      const std::size_t count = outputs ? m.output_size() : m.input_size();
      std::vector<std::string> vars;  // the model's names, quoted
      for (std::size_t k = 0; k < count; ++k) {
        const std::string var = outputs ? m.output_name(k) : m.input_name(k);
        if (var == variable) return {i, k};
        std::string shown = model::quoted(var);
        if (std::find(vars.begin(), vars.end(), shown) == vars.end()) vars.push_back(shown);
      }
      n.fail(fmt::format(
          "subsystem {} has no {} {} ({}s: {})", model::quoted(name), outputs ? "output" : "input",
          model::quoted(variable), outputs ? "output" : "input",
          vars.empty() ? std::string("none") : fmt::format("{}", fmt::join(vars, ", "))));
    }
    all.push_back(model::quoted(s.subsystems[i].name));
  }
  n.fail(fmt::format("no subsystem named {} (subsystems: {})", model::quoted(name),
                     fmt::join(all, ", ")));
}

ParsedSubsystem parse_subsystem(const Node& n, Systems& s) {
  ParsedSubsystem p{n, checked_name(n, s.names), {}, {}, nullptr, false};
  const Node model = n.require("model");
  const std::string type = model.string();
  if (type == "drive_train") {
    p.model = drive_train(n);
  } else if (const library::ModelEntry* entry = library::find_model(type)) {
    p.model = registered_model(n, *entry);
  } else if (type == "chain_segment") {
    p.model = chain_segment(n, s);
  } else if (type == "plugin") {
    p.model = plugin_model(n);
  } else if (type == "fmu") {
    p.model = fmu_model(n);
  } else if (type == "chain") {
    model.fail(
        "a chain is described by [model] and [partition], or cut explicitly into "
        "model = \"chain_segment\" subsystems, not as a [[subsystem]]");
  } else {
    std::vector<std::string> names = {"drive_train"};
    for (auto& name : library::model_names()) names.push_back(std::move(name));
    names.insert(names.end(), {"chain_segment", "plugin", "fmu"});
    model.fail(fmt::format("must be one of {} (got \"{}\")",
                           quoted_list(std::vector<std::string_view>(names.begin(), names.end())),
                           type));
  }
  p.solver = solver_keys(n);
  try {
    p.built = library::build_subsystem(p.model);
  } catch (const std::invalid_argument& e) {
    // A plugin's message names its library; the subsystem's name tells which of its uses.
    const bool plugin = std::holds_alternative<plugin::PluginDescription>(p.model);
    n.fail(plugin ? fmt::format("{}: {}", model::quoted(p.name), e.what()) : e.what());
  }
  return p;
}

// ---- connections ----

// The registered law that table `n` names, with its keys checked.
const system::LawEntry& connection_law(const Node& n) {
  const std::vector<std::string> names = system::law_names();
  const std::vector<std::string_view> laws(names.begin(), names.end());
  const system::LawEntry& law = system::law_entry(n.require("law").choice(laws));
  n.allow_only(connection_keys(law), fmt::format(" for law \"{}\"", law.name));
  return law;
}

// Inputs as a string or an array of strings.
std::vector<Node> input_list(const Node& n) {
  if (n.is_string()) return {n};
  auto items = n.elements();
  if (items.empty()) n.fail("must name at least one input");
  return items;
}

// Which connection feeds an input first: (subsystem, input) → (connection name, line).
using Feeds = std::map<std::pair<std::size_t, std::size_t>, std::pair<std::string, unsigned>>;

std::vector<InputRef> targets(const Node& n, Systems& s, const std::string& connection,
                              Feeds& feeds) {
  std::vector<InputRef> out;
  for (const Node& item : input_list(n)) {
    const auto [sub, input] = resolve(item, s, false);
    const auto [it, inserted] =
        feeds.emplace(std::pair{sub, input}, std::pair{connection, n.line()});
    // An effort input (force, torque, flow into a node) is the sum of every connection feeding
    // it; any other input takes one.
    if (!inserted && it->second.first == connection) {
      item.fail(
          fmt::format("input \"{}\" is fed twice by connection \"{}\"", item.string(), connection));
    }
    if (!inserted && !s.subsystems[sub].built->input_is_effort(input)) {
      item.fail(fmt::format(
          "input \"{}\" is fed already by connection \"{}\" (line {}), and connection \"{}\" "
          "feeds it too; only effort inputs (forces, torques, flows) take several connections, "
          "whose values add up; \"{}\" is not one: feed it by exactly one connection",
          item.string(), it->second.first, it->second.second, connection, item.string()));
    }
    s.subsystems[sub].coupled = true;
    out.push_back({sub, input});
  }
  return out;
}

// `to`: an input list for a law writing one variable, else a table with one input list per
// written variable (LawWrite::to_key).
std::vector<std::vector<InputRef>> connection_targets(const Node& n, const system::LawEntry& law,
                                                      Systems& s, const std::string& connection,
                                                      Feeds& feeds) {
  const Node to = n.require("to");
  if (law.writes.size() == 1) return {targets(to, s, connection, feeds)};
  if (!to.is_table()) {
    to.fail(fmt::format("must be a table {} (got {})", law.to_form, to.describe()));
  }
  to.allow_only(connection_to_keys(law));
  std::vector<std::vector<InputRef>> out;
  for (const auto& w : law.writes)
    out.push_back(targets(to.require(w.to_key), s, connection, feeds));
  return out;
}

system::DescribedConnection parse_connection(const Node& n, Systems& s, Feeds& feeds) {
  system::DescribedConnection c;
  c.name = checked_name(n, s.names);
  const system::LawEntry& law = connection_law(n);
  c.law = law.name;
  if (auto v = n.find("approximation")) {
    try {
      (void)polynomials::parse_approximation(v->string());
    } catch (const std::invalid_argument& e) {
      v->fail(e.what());
    }
    c.approximation = v->string();
    c.approximation_line = v->line();
  }
  const Node from = n.require("from");
  const std::vector<Node> reads = from.is_string() ? std::vector<Node>{from} : from.elements();
  const std::size_t expected = law.reads;
  if ((expected > 0 && reads.size() != expected) || reads.empty()) {
    from.fail(fmt::format("law \"{}\" reads {} output{} {} (got {})", law.name,
                          expected > 0 ? std::to_string(expected) : std::string("one or more"),
                          expected == 1 ? "" : "s", law.read_order, reads.size()));
  }
  for (const Node& r : reads) {
    const auto [sub, output] = resolve(r, s, true);
    s.subsystems[sub].coupled = true;
    c.from.push_back(OutputRef{sub, output});
  }
  c.parameters = law.parse(LawNode(n), c.from.size());
  c.to = connection_targets(n, law, s, c.name, feeds);
  return c;
}

// ---- whole-system checks ----

// A hint for an input that nothing feeds: the key that removes it, where a model has one.
std::string unfed_hint(const library::ModelDescription& model, const std::string& input) {
  if (std::holds_alternative<library::DriveTrainParameters>(model)) {
    if (input == "tau_left") return " (a free left end: left_coupled = false)";
    if (input == "tau_right") return " (a free right end: right_coupled = false)";
  }
  if (const auto* m = std::get_if<library::RegisteredModel>(&model)) {
    if (const library::ModelEntry* entry = library::find_model(m->model)) {
      for (const auto& [name, hint] : entry->unfed_hints) {
        if (name == input) return hint;
      }
    }
  }
  if (std::holds_alternative<library::ChainSegmentDescription>(model)) {
    return " (a cut element: a spring_damper connection between the bodies on both sides)";
  }
  if (std::holds_alternative<fmu::FmuDescription>(model)) {
    return " (connect it, or list the FMU's coupled inputs in `inputs`: an input not listed keeps "
           "its start value)";
  }
  return "";
}

void check_coupled(const Systems& s, const Feeds& feeds) {
  for (std::size_t i = 0; i < s.subsystems.size(); ++i) {
    const ParsedSubsystem& p = s.subsystems[i];
    if (!p.coupled) {
      p.node.fail(fmt::format(
          "\"{}\" is in no connection; every subsystem of a co-simulation must be coupled "
          "(connect it or remove it)",
          p.name));
    }
    for (std::size_t k = 0; k < p.built->input_size(); ++k) {
      if (feeds.count({i, k}) == 0) {
        const std::string input = p.built->input_name(k);
        p.node.fail(fmt::format("input {} is fed by no connection{}",
                                model::quoted(p.name + "." + input), unfed_hint(p.model, input)));
      }
    }
  }
}

// A path of feed-through subsystems from `at` back to `start` along connections (a reads an
// output of b's predecessor ... ), appended to `path`; true if found.
bool feedthrough_cycle(std::size_t start, std::size_t at,
                       const std::vector<std::vector<std::size_t>>& edges,
                       std::vector<bool>& visited, std::vector<std::size_t>& path) {
  for (std::size_t next : edges[at]) {
    if (next == start) return true;
    if (visited[next]) continue;
    visited[next] = true;
    path.push_back(next);
    if (feedthrough_cycle(start, next, edges, visited, path)) return true;
    path.pop_back();
  }
  return false;
}

// Feed-through (an output that depends on the inputs at once) is solved by the consistent update
// of METHODS D-1 (seed 000 Eq. 2.22) at every macro point. A loop closed by feed-through
// subsystems alone is refused: the coupling equations then have no state to anchor them, and
// Jacobi co-simulation of it is not zero-stable (seed 001 §1, §3.2: one of D_1, D_2 must be 0).
void check_feedthrough(const Systems& s, const std::vector<system::DescribedConnection>& conns) {
  const std::size_t ns = s.subsystems.size();
  std::vector<std::vector<std::size_t>> edges(ns);  // a → b: a connection reads a and feeds b
  for (const auto& c : conns) {
    for (const auto& r : c.from) {
      for (const auto& list : c.to) {
        for (const auto& in : list) {
          if (s.subsystems[r.subsystem].built->output_feeds_through(r.output) &&
              s.subsystems[in.subsystem].built->has_feedthrough()) {
            edges[r.subsystem].push_back(in.subsystem);
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < ns; ++i) {
    const ParsedSubsystem& p = s.subsystems[i];
    if (!p.built->has_feedthrough()) continue;
    std::vector<bool> visited(ns, false);
    std::vector<std::size_t> path{i};
    if (feedthrough_cycle(i, i, edges, visited, path)) {
      std::string loop;
      for (std::size_t k : path) loop += s.subsystems[k].name + " -> ";
      p.node.fail(fmt::format(
          "\"{}\" has direct feed-through and closes an algebraic loop {}{} that no coupling "
          "law resolves (a loop of feed-through subsystems only is not zero-stable, seed 001 "
          "§1); break the loop, e.g. give a controller output_lag > 0",
          p.name, loop, p.name));
    }
  }
}

}  // namespace

ElementKeys element_keys(const Node& n) {
  return system::read_element_keys(LawNode(n));
}

library::ElementLaw element_law(const Node& n) {
  return system::read_element_law(LawNode(n));
}

double LawNode::number(std::string_view key) const {
  return n_.require(key).number();
}

std::vector<double> LawNode::numbers(std::string_view key, std::size_t size,
                                     std::string_view what) const {
  const Node v = n_.require(key);
  if (size == SIZE_MAX) {
    std::vector<double> out;
    for (const Node& item : v.elements()) out.push_back(item.number());
    return out;
  }
  return detail::numbers(v, size, what);
}

std::string LawNode::choice(std::string_view key,
                            const std::vector<std::string_view>& allowed) const {
  return n_.require(key).choice(allowed);
}

std::string LawNode::source_text(std::string_view key) const {
  return n_.require(key).source_text();
}

void LawNode::fail(std::string_view key, const std::string& problem) const {
  if (key.empty()) n_.fail(problem);
  n_.require(key).fail(problem);
}

bool describes_chain_segments(const Node& top) {
  const auto subsystems = top.find("subsystem");
  if (!subsystems || !subsystems->is_array()) return false;
  for (const auto& item : subsystems->elements()) {
    if (!item.is_table()) continue;
    const auto model = item.find("model");
    if (model && model->is_string() && model->string() == "chain_segment") return true;
  }
  return false;
}

system::SystemDescription parse_system(const Node& subsystems, const Node* connections,
                                       std::shared_ptr<const library::ChainParameters> chain,
                                       std::vector<SolverOverride>& solvers) {
  Systems s;
  s.chain = std::move(chain);
  const std::vector<Node> tables = table_array(subsystems);
  if (tables.size() > kMaxSubsystems) {
    tables[kMaxSubsystems].fail(
        fmt::format("too many subsystems ({}): at most {}, the process executor's limit",
                    tables.size(), kMaxSubsystems));
  }
  for (const Node& n : tables) s.subsystems.push_back(parse_subsystem(n, s));
  if (s.subsystems.empty()) subsystems.fail("must describe at least one subsystem");
  check_chain_cover(s);
  system::SystemDescription d;
  Feeds feeds;
  if (connections != nullptr) {
    for (const Node& n : table_array(*connections))
      d.connections.push_back(parse_connection(n, s, feeds));
  }
  check_coupled(s, feeds);
  check_feedthrough(s, d.connections);
  solvers.clear();
  for (auto& p : s.subsystems) {
    d.subsystems.push_back({p.name, std::move(p.model)});
    solvers.push_back(p.solver);
  }
  // Everything the laws and models check was checked above; build once more so that a rule
  // missed here is still an error before the run, not during it.
  try {
    (void)system::build_system(d);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(subsystems.file(), 0, "connection", e.what());
  }
  return d;
}

}  // namespace macrostep::config::detail
