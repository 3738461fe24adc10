// The system description tables [[subsystem]] and [[connection]] (private to macrostep_config;
// the schema is in run_config.hpp).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/system/system_description.hpp"
#include "toml_node.hpp"

namespace macrostep::config::detail {

// Parses and validates the two arrays of tables (`connections` may be null) into a description
// whose every reference resolves, every input is fed exactly once, every subsystem is coupled and
// no subsystem has feed-through. Throws ConfigError naming file, line and key.
// `solvers` receives each subsystem's own solver keys (SolverOverride), one per subsystem.
// `chain`: the realized [model] chain that "chain_segment" subsystems cut (null without [model]).
system::SystemDescription parse_system(const Node& subsystems, const Node* connections,
                                       std::shared_ptr<const library::ChainParameters> chain,
                                       std::vector<SolverOverride>& solvers);

// Whether some [[subsystem]] of the document `top` has model = "chain_segment" (then [model]
// may stand beside the description: the segments cut its chain).
bool describes_chain_segments(const Node& top);

// The keys of [solver], which a [[subsystem]] may also carry.
inline const std::vector<std::string_view> kSolverKeys = {
    "rtol", "atol_pos", "atol_vel", "linear_solver", "max_order", "max_steps"};

// The solver keys present in table `n` with [solver]'s checks (ConfigError at the key). Other
// keys of `n` are the caller's to check.
SolverOverride solver_keys(const Node& n);

}  // namespace macrostep::config::detail
