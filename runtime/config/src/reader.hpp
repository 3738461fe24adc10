// The readers of the run configuration's sections (private to macrostep_config; the schema is in
// run_config.hpp). parse_config() (run_config.cpp) calls one reader per top-level key, in the
// order of its section list; each reader fills its part of the RunConfig and throws ConfigError
// naming file, line and key for any problem. A reader is given the key's node, or null when the
// file lacks the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "key_tables.hpp"
#include "macrostep/config/run_config.hpp"
#include "toml_node.hpp"

namespace macrostep::config::detail {

// A [[model.force]] with coupling_bodies = true, resolved once the partition is known.
struct PendingCouplingSelection {
  std::size_t force_index;
  std::string file;
  unsigned line;
  std::string path;
};

struct ParseState {
  RunConfig& config;
  std::vector<PendingCouplingSelection> pending;
  const Node* top = nullptr;  // the document, for sections that read more than their own key
};

// The top-level keys: the sections that parse_config() reads (run_config.cpp), in its order.
KeyList section_keys();

// The numbers a key accepts, and the checked readers of numbers (ConfigError at the key).
enum class Domain { kAny, kPositive, kNonNegative };
std::string fmt_number(double v);
double checked(const Node& n, Domain domain);
double at_least(const Node& n, double lower);
// An integer in lo..hi; `hi_name` names the bound in the message ("model.masses"), if not empty.
std::int64_t integer_in(const Node& n, std::int64_t lo, std::int64_t hi, std::string_view hi_name);

// [model] (chain_reader.cpp); [[subsystem]] with [[connection]], and [partition]
// (system_reader.cpp); the coupling-body force selections once both are read.
void read_model(const Node* node, ParseState& state);
void read_subsystems(const Node* node, ParseState& state);
void read_connections(const Node* node, ParseState& state);
void read_partition(const Node* node, ParseState& state);
void resolve_coupling_selections(ParseState& state);

// [solver], [simulation], [output], [executor] and description (section_readers.cpp).
void read_solver(const Node* node, ParseState& state);
void read_simulation(const Node* node, ParseState& state);
void read_output(const Node* node, ParseState& state);
void read_executor(const Node* node, ParseState& state);
void read_description(const Node* node, ParseState& state);

// [cosim] (cosim_reader.cpp), read after [simulation], whose end_time its checks use; then every
// [[connection]]'s own approximation against it.
void read_cosim(const Node* node, ParseState& state);
void check_connection_approximations(const ParseState& state);

}  // namespace macrostep::config::detail
