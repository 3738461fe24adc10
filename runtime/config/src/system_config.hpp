// The system description tables [[subsystem]] and [[connection]] (private to macrostep_config;
// the schema is in run_config.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "key_tables.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/library/model_registry.hpp"
#include "macrostep/system/law_registry.hpp"
#include "macrostep/system/spring_damper_law.hpp"
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

// A table as the coupling laws' parse functions read it (system::LawTable): every failure is the
// ConfigError of the Node at the key. Refers to `n`, which must outlive it.
class LawNode final : public system::LawTable {
 public:
  explicit LawNode(const Node& n) : n_(n) {}
  bool has(std::string_view key) const override { return n_.has(key); }
  void require(std::string_view key) const override { (void)n_.require(key); }
  double number(std::string_view key) const override;
  std::vector<double> numbers(std::string_view key, std::size_t size,
                              std::string_view what) const override;
  bool boolean(std::string_view key) const override { return n_.require(key).boolean(); }
  std::string choice(std::string_view key,
                     const std::vector<std::string_view>& allowed) const override;
  std::string source_text(std::string_view key) const override;
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const override;

 private:
  const Node& n_;
};

// The element-law keys of table `n`: system::read_element_keys, the one reader of the law
// ([model.element], [[model.element_override]], a drive train's shafts and the spring_damper /
// rotational_spring_damper connections). Other keys of `n` are the caller's to check.
using ElementKeys = system::ElementKeys;
ElementKeys element_keys(const Node& n);

// The law of table `n`: system::read_element_law (c required, the others defaults).
library::ElementLaw element_law(const Node& n);

// The model of [[subsystem]] table `n` whose model = entry.name, read through the entry's
// parameter description: unknown keys, types, bounds, required keys and the entry's check, each
// a ConfigError at its key; absent keys take their defaults. Solver keys are the caller's.
library::RegisteredModel registered_model(const Node& n, const library::ModelEntry& entry);

// A name the user gives (a subsystem, connection or variable name, or a reference to one): a
// control character would split the one-line messages and result columns that show it.
std::string user_name(const Node& n);

// A file named by a string value, absolute or relative to the configuration's directory, as an
// absolute canonical path (workers and resumed runs read the same file); `empty` is the message
// for "", "no such file: PATH" the one for a missing file (ConfigError at the value).
std::string resolved_path(const Node& node, std::string_view empty);

// The [[subsystem]] table of a user's model (user_model_reader.cpp): a plugin (`library`,
// `parameters`) or an FMU (`path`, `parameters`, `inputs`, `outputs`, `interface`); files relative
// to the configuration's directory. ConfigError at the key.
plugin::PluginDescription plugin_model(const Node& n);
fmu::FmuDescription fmu_model(const Node& n);

// The solver keys present in table `n` with [solver]'s checks (ConfigError at the key). Other
// keys of `n` are the caller's to check.
SolverOverride solver_keys(const Node& n);

}  // namespace macrostep::config::detail
