// The system description tables [[subsystem]] and [[connection]] (private to macrostep_config;
// the schema is in run_config.hpp).
#pragma once

#include "macrostep/system/system_description.hpp"
#include "toml_node.hpp"

namespace macrostep::config::detail {

// Parses and validates the two arrays of tables (`connections` may be null) into a description
// whose every reference resolves, every input is fed exactly once, every subsystem is coupled and
// no subsystem has feed-through. Throws ConfigError naming file, line and key.
system::SystemDescription parse_system(const Node& subsystems, const Node* connections);

}  // namespace macrostep::config::detail
