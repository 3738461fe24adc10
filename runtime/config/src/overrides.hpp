// --set KEY=VALUE (run_config.hpp: Override): the edits of a parsed file's tree, made before
// the sections are read (private to macrostep_config).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "toml_node.hpp"

namespace macrostep::config::detail {

// Applies the `arguments` ("KEY=VALUE") in order to the document's tree and returns one Override
// each. Throws ConfigError naming the argument ("--set KEY=VALUE: problem") for one that is not
// KEY=VALUE or whose key cannot be set: an index or name that no array element has, a path
// through a value that is not a table.
std::vector<Override> apply_overrides(Document& document,
                                      const std::vector<std::string>& arguments);

// The override that gave `key_path` (a key or table at or under its key, or under the table it
// added), the latest and most specific one if several did; null if none did.
const Override* covering(const std::vector<Override>& overrides, std::string_view key_path);

// "--set KEY=VALUE" (clipped): how messages name an override.
std::string set_origin(const Override& o);

}  // namespace macrostep::config::detail
