// [[subsystem]] with [[connection]] (system_config.cpp reads them), and [partition], which cuts
// a [model] chain (reader.hpp; the schema is in run_config.hpp).
#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "reader.hpp"
#include "system_config.hpp"

namespace macrostep::config::detail {

// [[subsystem]] with the [[connection]] tables (system_config.cpp).
void read_subsystems(const Node* node, ParseState& state) {
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
void read_connections(const Node*, ParseState&) {}

namespace {

void check_subsystem_limit(const Node& n, std::size_t subsystems) {
  if (subsystems > kMaxSubsystems) {
    n.fail(fmt::format("too many subsystems ({}): at most {}, the process executor's limit",
                       subsystems, kMaxSubsystems));
  }
}

}  // namespace

void read_partition(const Node* node, ParseState& state) {
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
  n.allow_only(keys_of(Table::kPartition));
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

}  // namespace macrostep::config::detail
