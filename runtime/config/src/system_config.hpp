// The system description tables [[subsystem]] and [[connection]] (private to macrostep_config;
// the schema is in run_config.hpp).
#pragma once

#include <memory>
#include <optional>
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

// The element-law keys c, d, C, D (>= 0) and ex, ev (>= 1) of table `n` (seed 000 Eq. 2.9),
// each if given. The one reader of the law: [model.element], [[model.element_override]], a drive
// train's shafts and the spring_damper / rotational_spring_damper connections all use it, with
// its messages ("must be >= 0 (got -1)" at the key). Other keys of `n` are the caller's to check.
struct ElementKeys {
  std::optional<double> c, d, C, D, ex, ev;
  bool any() const { return c || d || C || D || ex || ev; }
};
ElementKeys element_keys(const Node& n);

// The law of table `n` (element_keys): c required, the others library::ElementLaw's defaults.
library::ElementLaw element_law(const Node& n);

// The keys of [solver], which a [[subsystem]] may also carry.
inline const std::vector<std::string_view> kSolverKeys = {
    "rtol", "atol_pos", "atol_vel", "linear_solver", "max_order", "max_steps"};

// The solver keys present in table `n` with [solver]'s checks (ConfigError at the key). Other
// keys of `n` are the caller's to check.
SolverOverride solver_keys(const Node& n);

}  // namespace macrostep::config::detail
