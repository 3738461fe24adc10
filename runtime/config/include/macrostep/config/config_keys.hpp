// The keys of the run configuration, table by table, as the reader accepts them: the list that
// `macrostep config-keys` prints and that a test holds docs/reference/configuration-keys.md
// against. It is built from the same definitions the reader checks each table with, and from
// the registries for the sets registered elsewhere (the models' parameters, the coupling laws'
// keys), so it cannot differ from what a file may contain.
#pragma once

#include <string>
#include <vector>

namespace macrostep::config {

// One kind of table and every key it accepts.
struct KeyTable {
  // The table as a configuration writes it: "Top level", "[model]", "[[model.force]] with
  // type = \"harmonic\"", "[[subsystem]] with model = \"pid\"", "[[connection]] with law =
  // \"signal\"", "Value table" (a value written as an inline table).
  std::string table;
  // Its keys, in the order that "unknown key ... (allowed: ...)" lists them.
  std::vector<std::string> keys;
};

// Every table, in the order of a file: the top level, [model] and its tables, [partition],
// [solver], [simulation], [output], [cosim], [executor], then [[subsystem]] per model (the
// reader's own models, then the registered ones in registration order) and [[connection]] per
// coupling law (registration order), each law that writes several variables followed by its
// `to` table. Deterministic for a given set of registrations.
std::vector<KeyTable> key_tables();

}  // namespace macrostep::config
