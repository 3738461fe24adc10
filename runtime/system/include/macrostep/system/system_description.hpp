// A coupled system described as data (METHODS.md §1.1): named subsystems of the
// built-in library and named connections, each one coupling law with the outputs it reads and
// the inputs its coupling variables feed. The configuration's [[subsystem]] / [[connection]]
// tables (runtime/config) become one SystemDescription after validation; build_system() turns it
// into the CoupledSystem that the schemes, the executors and MonolithicSystem run. A graph of any
// shape: branches, loops, one subsystem coupled to many, one coupling variable feeding several
// inputs (a shaft's torque feeds both bodies it joins), several coupling variables feeding one
// effort input (their sum, in connection order: a body with several springs attached).
//
// Names: under Naming::kQualified (the default) a subsystem's outputs and states are addressed
// as "<subsystem>.<local name>" (the model's own output_name()/state_name()); under
// Naming::kGlobal by the local names alone, which the models make unique across the system (a
// chain cut into segments: "x_17" by global mass index). The coupling variables are named after
// their connection: "<connection>" for a law writing one variable, "<connection>.position" and
// "<connection>.velocity" for a displacement law.
//
// The chain syntax of a configuration ([model] + [partition]) is lowered into a description by
// chain_description() (chain_system.hpp): every consumer sees a SystemDescription.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/law_registry.hpp"

namespace macrostep::system {

// One input of one subsystem.
struct InputRef {
  std::size_t subsystem = 0;
  std::size_t input = 0;
};

struct DescribedSubsystem {
  std::string name;
  library::ModelDescription model;
};

// One connection: a registered coupling law (law_registry.hpp) with its parameters, the outputs
// it reads and the inputs its variables feed.
struct DescribedConnection {
  std::string name;
  std::string law;  // the law's registered name ("spring_damper")
  // What the law's parse function gave (or code built: the chain's cuts); immutable and shared
  // by copies of the description.
  std::shared_ptr<const LawParameters> parameters;
  std::vector<OutputRef> from;            // the law's reads, in its order
  std::vector<std::vector<InputRef>> to;  // to[k]: the inputs written variable k feeds
  // The coupling-variable approximation of this connection's variables (a name that
  // polynomials::parse_approximation accepts); empty: [cosim] approximation. approximation_line is
  // its line in the configuration, for messages about combinations checked later.
  std::string approximation;
  unsigned approximation_line = 0;
};

// How results and the estimators name the variables of a described system.
enum class Naming : std::uint8_t {
  // "<subsystem>.<variable>". Result columns: every distinct output of every subsystem, in
  // subsystem and output order. Monitored outputs: the state outputs that connections read, in
  // subsystem and output order.
  kQualified,
  // The models' own names, unique across the system. Result columns: the monitored outputs, once
  // per name. Monitored outputs: every read of every connection that is a state output, in
  // connection and read order (a body read by two connections is watched twice).
  kGlobal,
};

// The chain a description was lowered from (chain_system.hpp): the facts of the chain syntax
// that metadata, summaries and tools report. Data only; the run does not depend on it.
struct ChainOrigin {
  std::shared_ptr<const library::ChainParameters> params;  // realized, shared with the segments
  std::uint64_t seed = 0;
  // Subsystem L holds masses [boundaries[L], boundaries[L+1]) (0-based).
  std::vector<std::size_t> boundaries;

  std::size_t masses() const { return params ? params->size() : 0; }
  // 1-based indices of the bodies next to every cut, in chain order: b_1, b_1+1, b_2, ...
  std::vector<std::size_t> coupling_bodies() const;
};

struct SystemDescription {
  std::vector<DescribedSubsystem> subsystems;
  std::vector<DescribedConnection> connections;
  Naming naming = Naming::kQualified;
  // The uncut model of the whole system for its monolithic run: one model without inputs that
  // has a state of the same name (Naming::kGlobal) for every output the connections read, and
  // integrates the same equations without the cuts (the chain: all its masses in one segment).
  // The monolithic run then integrates it and evaluates each connection's law from its states.
  // Unset: the monolithic run assembles subsystems and laws into one DAE (MonolithicSystem).
  std::optional<library::ModelDescription> whole;
  std::optional<ChainOrigin> chain;  // set when lowered from the chain syntax
};

// The coupling variable names of a connection, in the law's write order: "<connection>" for a law
// writing one variable, "<connection>.<suffix>" (LawWrite::suffix) otherwise. Throws
// std::invalid_argument for an unregistered law.
std::vector<std::string> coupling_names(const DescribedConnection& connection);

// The CoupledSystem of the description: subsystems built with library::build_subsystem, one law
// per connection in connection order (so coupling variables are numbered in that order), every
// input wired to the variable that feeds it. Monitored outputs (the concept-1 estimators,
// METHODS §5) are the outputs that connections read and that are one position or velocity state
// of their subsystem (∂y/∂z a single entry 1 on a state of that role), named
// "<subsystem>.<output>", in subsystem and output order. Throws std::invalid_argument for what
// the configuration's validation reports with file and line (unknown references, an input fed
// twice or never, wrong read counts, feed-through) and for parameters a model or law rejects.
CoupledSystem build_system(const SystemDescription& description);

// The outputs of `s` with distinct names, first occurrence each, in output order (a one-inertia
// drive train's two ends are both "phi_1").
std::vector<std::size_t> distinct_outputs(const model::Subsystem& s);

// The result-column name of variable `local` (an output or state name) of subsystem i under the
// description's naming.
std::string variable_name(const SystemDescription& d, std::size_t i, const std::string& local);

// One result column of an output.
struct NamedOutput {
  std::string name;
  OutputRef output;
};

// The outputs a result writes (without --all-states) for `system` = build_system(d), in column
// order, under the description's naming (Naming).
std::vector<NamedOutput> result_outputs(const SystemDescription& d, const CoupledSystem& system);

// The coupling law of one connection (what build_system() installs for it), made by its
// registered entry. Throws std::invalid_argument for an unregistered law, missing parameters, a
// wrong number of reads and what the law's make refuses.
std::unique_ptr<CouplingLaw> build_law(const DescribedConnection& connection);

}  // namespace macrostep::system
