// A coupled system described as data (issue 9; METHODS.md §1.1): named subsystems of the
// built-in library and named connections, each one coupling law with the outputs it reads and
// the inputs its coupling variables feed. The configuration's [[subsystem]] / [[connection]]
// tables (runtime/config) become one SystemDescription after validation; build_system() turns it
// into the CoupledSystem that the schemes, the executors and MonolithicSystem run. A graph of any
// shape: branches, loops, one subsystem coupled to many, one coupling variable feeding several
// inputs (a shaft's torque feeds both bodies it joins).
//
// Names: a subsystem's outputs and states are addressed as "<subsystem>.<local name>" (the
// model's own output_name()/state_name()); the coupling variables are named after their
// connection: "<connection>" for a law writing one variable, "<connection>.position" and
// "<connection>.velocity" for a displacement law.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/hydraulic_node_law.hpp"

namespace macrostep::system {

// One input of one subsystem.
struct InputRef {
  std::size_t subsystem = 0;
  std::size_t input = 0;
};

enum class LawKind : std::uint8_t {
  kSpringDamper,            // SpringDamperLaw: reads [x_left, v_left, x_right, v_right]
  kRotationalSpringDamper,  // RotationalSpringDamperLaw: [φ_left, ω_left, φ_right, ω_right]
  kSignal,                  // SignalLaw: [y]
  kDisplacement,            // DisplacementLaw: [x, v], writes [x, v]
  kHydraulicNode,           // HydraulicNodeLaw: [V_1, ..., V_N]
  kJoint,                   // JointConstraintLaw: [x_a, v_a, x_b, v_b], writes [λ, μ]
};

// The number of outputs a law reads (0: any number >= 1, the hydraulic node) and the number of
// coupling variables it writes.
std::size_t law_read_count(LawKind kind);
std::size_t law_write_count(LawKind kind);

struct DescribedSubsystem {
  std::string name;
  library::ModelDescription model;
};

struct DescribedConnection {
  std::string name;
  LawKind law = LawKind::kSignal;
  std::vector<OutputRef> from;            // the law's reads, in its order
  std::vector<std::vector<InputRef>> to;  // to[k]: the inputs written variable k feeds
  library::ElementLaw element;            // kSpringDamper, kRotationalSpringDamper
  double gain = 1.0, offset = 0.0;        // kSignal
  HydraulicNodeLaw::Parameters node;      // kHydraulicNode
  std::vector<double> initial_volumes;    // kHydraulicNode: V_i⁰ (empty: all zero)
  // The coupling-variable approximation of this connection's variables (a name that
  // coupling::parse_approximation accepts); empty: [cosim] approximation. approximation_line is
  // its line in the configuration, for messages about combinations checked later.
  std::string approximation;
  unsigned approximation_line = 0;
};

struct SystemDescription {
  std::vector<DescribedSubsystem> subsystems;
  std::vector<DescribedConnection> connections;
};

// The coupling variable names of a connection, in the law's write order.
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

// The outputs of `s` with distinct names, first occurrence each, in output order: the result
// columns of a described system (a one-inertia drive train's two ends are both "phi_1").
std::vector<std::size_t> distinct_outputs(const model::Subsystem& s);

}  // namespace macrostep::system
