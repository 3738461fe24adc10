// The keys of every table of the run configuration (key_tables.hpp), and their list for the
// reference (config_keys.hpp).
#include "key_tables.hpp"

#include <fmt/format.h>

#include <array>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "macrostep/config/config_keys.hpp"
#include "reader.hpp"

namespace macrostep::config::detail {

namespace {

// The element law's keys c, d, C, D, ex, ev: those of the spring_damper law, whose reader
// (system::read_element_keys) every element table shares.
KeyList element_law_keys() {
  KeyList keys;
  for (const auto& key : system::law_entry("spring_damper").keys) keys.push_back(key.name);
  return keys;
}

KeyList joined(KeyList head, const KeyList& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// [cosim], the longest list.
constexpr std::string_view kCosimKeys[] = {"scheme",
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
                                           "prediction_ratio_limit",
                                           "predictor",
                                           "least_squares_points",
                                           "approximation",
                                           "jump_handling",
                                           "min_micro_steps",
                                           "output_every",
                                           "sequence",
                                           "gauss_seidel",
                                           "executor",
                                           "threads",
                                           "jacobian",
                                           "tau",
                                           "max_corrector_passes",
                                           "perturbation_min",
                                           "omega",
                                           "final_pass"};

struct FixedTable {
  Table table;
  std::string_view title;  // KeyTable::table
  KeyList keys;
};

// In the order of Table and of a file.
const std::vector<FixedTable>& fixed_tables() {
  static const std::vector<FixedTable> tables = [] {
    const KeyList element = element_law_keys();
    return std::vector<FixedTable>{
        {Table::kModel,
         "[model]",
         {"type", "masses", "seed", "mass", "left_end", "right_end", "x0", "v0", "element",
          "mass_override", "element_override", "force"}},
        {Table::kElement, "[model.element]", joined(element, {"modulation"})},
        {Table::kModulation, "[model.element.modulation]", {"amplitude", "omega", "period"}},
        {Table::kMassOverride, "[[model.mass_override]]", {"first", "last", "mass"}},
        {Table::kElementOverride, "[[model.element_override]]", joined({"first", "last"}, element)},
        {Table::kValueTable, "Value table", {"uniform", "signed_uniform", "linear"}},
        {Table::kPartition, "[partition]", {"subsystems", "sizes"}},
        {Table::kSolver, "[solver]", joined(solver_keys_list(), {"micro_step_stop"})},
        {Table::kSimulation, "[simulation]", {"end_time", "output_interval"}},
        {Table::kOutput,
         "[output]",
         {"file", "all_states", "checkpoint_every", "checkpoint", "rows"}},
        {Table::kCosim, "[cosim]", KeyList(std::begin(kCosimKeys), std::end(kCosimKeys))},
        {Table::kExecutor, "[executor]", {"handshake_timeout", "processes", "ranks"}},
        {Table::kShaft, "[[subsystem.shaft]] with model = \"drive_train\"", element},
        {Table::kLoad,
         "[[subsystem.load]] with model = \"drive_train\"",
         {"inertia", "constant", "step", "step_time", "step_width"}},
    };
  }();
  return tables;
}

// A force type and its own keys.
struct ForceTypeKeys {
  std::string_view type;
  KeyList own;
};
const std::array<ForceTypeKeys, 4>& force_type_keys() {
  static const std::array<ForceTypeKeys, 4> types = {{
      {"harmonic", {"omega", "phase"}},
      {"contact", {"stiffness"}},
      {"impulse", {"time", "times", "duration", "edge"}},
      {"modified_sine", {"omega", "phase", "exponent"}},
  }};
  return types;
}

// A model whose [[subsystem]] table this library reads, its own keys, and whether the solver
// keys apply (an FMU's table has none).
struct ReaderModel {
  std::string_view model;
  KeyList own;
  bool solver;
};
const std::array<ReaderModel, 4>& reader_model_keys() {
  static const std::array<ReaderModel, 4> models = {{
      {"drive_train",
       {"inertia", "shaft", "bearing_damping", "angle0", "speed0", "load", "left_coupled",
        "right_coupled"},
       true},
      {"chain_segment", {"masses"}, true},
      {"plugin", {"library", "parameters", "check_jacobians"}, true},
      {"fmu", {"path", "parameters", "inputs", "outputs", "interface"}, false},
  }};
  return models;
}

}  // namespace

const KeyList& keys_of(Table table) {
  const auto& tables = fixed_tables();
  const auto index = static_cast<std::size_t>(table);
  if (index >= tables.size() || tables[index].table != table) {
    throw std::logic_error("key_tables.cpp: the fixed tables are not in the order of Table");
  }
  return tables[index].keys;
}

const KeyList& solver_keys_list() {
  static const KeyList keys = {"rtol",          "atol_pos",  "atol_vel",
                               "linear_solver", "max_order", "max_steps"};
  return keys;
}

const KeyList& force_selection_keys() {
  static const KeyList keys = {"masses", "fraction", "all", "coupling_bodies"};
  return keys;
}

const std::vector<AlternativeKeys>& alternative_keys() {
  static const std::vector<AlternativeKeys> groups = {
      {"partition", {"subsystems", "sizes"}},
      {"model.force", force_selection_keys()},
      {"model.force", {"time", "times"}},
  };
  return groups;
}

const KeyList& force_types() {
  static const KeyList types = [] {
    KeyList out;
    for (const auto& t : force_type_keys()) out.push_back(t.type);
    return out;
  }();
  return types;
}

KeyList force_keys(std::string_view type) {
  for (const auto& t : force_type_keys()) {
    if (t.type != type) continue;
    KeyList keys = joined({"type"}, force_selection_keys());
    keys.insert(keys.end(), {"alternate_sign", "amplitude"});
    return joined(std::move(keys), t.own);
  }
  throw std::logic_error(fmt::format("force_keys: no force type \"{}\"", type));
}

const KeyList& reader_models() {
  static const KeyList models = [] {
    KeyList out;
    for (const auto& m : reader_model_keys()) out.push_back(m.model);
    return out;
  }();
  return models;
}

KeyList subsystem_keys(std::string_view model) {
  for (const auto& m : reader_model_keys()) {
    if (m.model != model) continue;
    const KeyList keys = joined({"name", "model"}, m.own);
    return m.solver ? joined(keys, solver_keys_list()) : keys;
  }
  throw std::logic_error(fmt::format("subsystem_keys: no reader of model \"{}\"", model));
}

KeyList registered_model_keys(const library::ModelEntry& entry) {
  KeyList keys = {"name", "model"};
  for (const auto& p : entry.parameters) keys.push_back(p.name);
  return joined(std::move(keys), solver_keys_list());
}

KeyList connection_keys(const system::LawEntry& law) {
  KeyList keys = {"name", "law", "from", "to", "approximation"};
  for (const auto& key : law.keys) keys.push_back(key.name);
  return keys;
}

KeyList connection_to_keys(const system::LawEntry& law) {
  KeyList keys;
  if (law.writes.size() < 2) return keys;
  for (const auto& w : law.writes) keys.push_back(w.to_key);
  return keys;
}

}  // namespace macrostep::config::detail

namespace macrostep::config {

namespace {

KeyTable key_table(std::string title, const detail::KeyList& keys) {
  return {std::move(title), std::vector<std::string>(keys.begin(), keys.end())};
}

std::string titled(std::string_view table, std::string_view key, std::string_view value) {
  return fmt::format("{} with {} = \"{}\"", table, key, value);
}

}  // namespace

std::vector<KeyTable> key_tables() {
  using detail::Table;
  std::vector<KeyTable> out = {key_table("Top level", detail::section_keys())};
  const auto& fixed = detail::fixed_tables();
  const auto add_fixed = [&](Table first, Table last) {
    for (auto k = static_cast<std::size_t>(first); k <= static_cast<std::size_t>(last); ++k) {
      out.push_back(key_table(std::string(fixed[k].title), detail::keys_of(fixed[k].table)));
    }
  };
  add_fixed(Table::kModel, Table::kElementOverride);
  for (const auto type : detail::force_types()) {
    out.push_back(key_table(titled("[[model.force]]", "type", type), detail::force_keys(type)));
  }
  add_fixed(Table::kValueTable, Table::kExecutor);
  for (const auto model : detail::reader_models()) {
    out.push_back(
        key_table(titled("[[subsystem]]", "model", model), detail::subsystem_keys(model)));
    if (model == "drive_train") add_fixed(Table::kShaft, Table::kLoad);
  }
  for (const std::string& name : library::model_names()) {
    out.push_back(key_table(titled("[[subsystem]]", "model", name),
                            detail::registered_model_keys(*library::find_model(name))));
  }
  for (const std::string& name : system::law_names()) {
    const system::LawEntry& law = system::law_entry(name);
    out.push_back(key_table(titled("[[connection]]", "law", name), detail::connection_keys(law)));
    const detail::KeyList to = detail::connection_to_keys(law);
    if (!to.empty()) out.push_back(key_table(titled("[connection.to]", "law", name), to));
  }
  return out;
}

}  // namespace macrostep::config
