// [model]: the oscillator chain of MODELS.md §1, its element law, overrides and force groups
// (reader.hpp; the schema is in run_config.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "reader.hpp"
#include "system_config.hpp"

namespace macrostep::config::detail {

namespace {

// An upper bound that only protects against typos that would exhaust memory.
constexpr std::int64_t kMaxMasses = 100'000'000;

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
  n.allow_only(keys_of(Table::kValueTable));
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
  n.allow_only(keys_of(Table::kElement));
  const library::ElementLaw law = detail::element_law(n);
  e.c = law.c;
  e.d = law.d;
  e.C = law.C;
  e.D = law.D;
  e.ex = law.ex;
  e.ev = law.ev;
  if (auto m = n.find("modulation")) {
    m->expect_table();
    m->allow_only(keys_of(Table::kModulation));
    e.modulation_amplitude = m->require("amplitude").number();
    e.modulation_omega = m->require("omega").number();
    e.modulation_period = static_cast<std::size_t>(
        integer_in(m->require("period"), 1, std::numeric_limits<std::int64_t>::max(), ""));
  }
}

void parse_mass_overrides(const Node& n, library::ChainSpec& chain) {
  for (const auto& item : table_array(n)) {
    item.allow_only(keys_of(Table::kMassOverride));
    const auto [first, last] = index_range(item, chain.masses, "model.masses");
    const double mass = checked(item.require("mass"), Domain::kPositive);
    chain.mass_overrides.push_back({first, last, mass});
  }
}

void parse_element_overrides(const Node& n, library::ChainSpec& chain) {
  const std::size_t elements = chain.masses + 1;
  for (const auto& item : table_array(n)) {
    item.allow_only(keys_of(Table::kElementOverride));
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
  const KeyList& kinds = force_selection_keys();
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
  const std::string type = n.require("type").choice(force_types());
  if (type == "harmonic") {
    f.type = library::ForceType::kHarmonic;
  } else if (type == "contact") {
    f.type = library::ForceType::kContact;
  } else if (type == "impulse") {
    f.type = library::ForceType::kImpulse;
  } else {
    f.type = library::ForceType::kModifiedSine;
  }
  n.allow_only(force_keys(type), fmt::format(" for a {} force", type));
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

}  // namespace

void read_model(const Node* node, ParseState& state) {
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
  n.allow_only(keys_of(Table::kModel));
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

}  // namespace macrostep::config::detail
