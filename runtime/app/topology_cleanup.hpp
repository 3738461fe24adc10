// `macrostep topology` and `macrostep cleanup` (DESIGN.md "The macrostep command").
#pragma once

#include <string>

namespace macrostep::app {

// Prints what hwloc sees and, when `config_path` is not empty, the placement map that the
// configuration's co-simulation would get under `pin` (subsystems from its [partition]; each
// with 1 + k PUs, k = 1 when its [cosim] estimator is exMD or exLE, else 0). Throws
// std::invalid_argument for a bad --pin value or a listed PU that is not usable, and
// config::ConfigError for a bad configuration (both exit 2 in main()).
int topology_command(const std::string& config_path, const std::string& pin);

// Removes this user's stale shared-memory segments (owner process gone) and prints each one
// removed, or "no stale segments".
int cleanup_command();

}  // namespace macrostep::app
