// SystemDescription → CoupledSystem (system_description.hpp; METHODS.md §1.1, §5).
#include "macrostep/system/system_description.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "macrostep/system/displacement_law.hpp"
#include "macrostep/system/joint_constraint_law.hpp"
#include "macrostep/system/rotational_spring_damper_law.hpp"
#include "macrostep/system/signal_law.hpp"
#include "macrostep/system/spring_damper_law.hpp"

namespace macrostep::system {

namespace {

std::unique_ptr<CouplingLaw> make_law(const DescribedConnection& c) {
  const auto names = coupling_names(c);
  const std::size_t reads = law_read_count(c.law);
  if ((reads > 0 && c.from.size() != reads) || c.from.empty()) {
    throw std::invalid_argument("connection " + c.name + ": wrong number of outputs read");
  }
  switch (c.law) {
    case LawKind::kSpringDamper:
      return std::make_unique<SpringDamperLaw>(names[0], c.element, c.from[0], c.from[1], c.from[2],
                                               c.from[3]);
    case LawKind::kRotationalSpringDamper:
      return std::make_unique<RotationalSpringDamperLaw>(names[0], c.element, c.from[0], c.from[1],
                                                         c.from[2], c.from[3]);
    case LawKind::kSignal:
      return std::make_unique<SignalLaw>(names[0], c.from[0], c.gain, c.offset);
    case LawKind::kDisplacement:
      return std::make_unique<DisplacementLaw>(names[0], names[1], c.from[0], c.from[1]);
    case LawKind::kHydraulicNode:
      return std::make_unique<HydraulicNodeLaw>(names[0], c.node, c.from, c.initial_volumes);
    case LawKind::kJoint:
      return std::make_unique<JointConstraintLaw>(names[0], names[1], c.from[0], c.from[1],
                                                  c.from[2], c.from[3]);
  }
  throw std::invalid_argument("connection " + c.name + ": unknown law");
}

// True if output `o` of `s` is one state of role position or velocity, taken as it is (∂y/∂z a
// single nonzero entry 1 at the initial state); `group` receives the role's weight group. The
// finite-difference default of a model without analytic coupling Jacobians (users' plugins)
// gives that entry as 1 up to rounding and the others as exactly 0 (the output does not move
// with them), so such outputs are watched too.
bool is_state_output(const model::Subsystem& s, std::size_t o, control::WeightGroup& group) {
  const model::EntryPattern pattern = s.output_jacobian_pattern();
  std::vector<double> z(s.state_size()), zp(s.state_size()), u(s.input_size(), 0.0);
  s.initial_state(u, z, zp);
  std::vector<double> values(pattern.nonzeros());
  s.output_jacobian(s.initial_time(), z, u, values);
  std::size_t entries = 0, column = 0;
  double value = 0.0;
  for (std::size_t k = 0; k < pattern.nonzeros(); ++k) {
    if (pattern.row[k] != o || values[k] == 0.0) continue;
    ++entries;
    column = pattern.column[k];
    value = values[k];
  }
  if (entries != 1 || std::abs(value - 1.0) > 1e-6) return false;
  const model::StateRole role = s.state_roles()[column];
  if (role == model::StateRole::kOther) return false;
  group = role == model::StateRole::kPosition ? control::WeightGroup::kPosition
                                              : control::WeightGroup::kVelocity;
  return true;
}

}  // namespace

std::size_t law_read_count(LawKind kind) {
  switch (kind) {
    case LawKind::kSpringDamper:
    case LawKind::kRotationalSpringDamper:
    case LawKind::kJoint:
      return 4;
    case LawKind::kSignal:
      return 1;
    case LawKind::kDisplacement:
      return 2;
    case LawKind::kHydraulicNode:
      return 0;
  }
  return 0;
}

std::size_t law_write_count(LawKind kind) {
  return kind == LawKind::kDisplacement || kind == LawKind::kJoint ? 2 : 1;
}

std::vector<std::string> coupling_names(const DescribedConnection& connection) {
  if (connection.law == LawKind::kDisplacement) {
    return {connection.name + ".position", connection.name + ".velocity"};
  }
  if (connection.law == LawKind::kJoint) {
    return {connection.name + ".lambda", connection.name + ".mu"};
  }
  return {connection.name};
}

std::vector<std::size_t> distinct_outputs(const model::Subsystem& s) {
  std::vector<std::size_t> out;
  std::vector<std::string> seen;
  for (std::size_t o = 0; o < s.output_size(); ++o) {
    std::string name = s.output_name(o);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(std::move(name));
    out.push_back(o);
  }
  return out;
}

CoupledSystem build_system(const SystemDescription& description) {
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  std::vector<std::vector<std::size_t>> inputs;
  for (const auto& d : description.subsystems) {
    subsystems.push_back(library::build_subsystem(d.model));
    // SIZE_MAX marks an input no connection feeds yet.
    inputs.emplace_back(subsystems.back()->input_size(), SIZE_MAX);
  }
  std::vector<std::unique_ptr<CouplingLaw>> laws;
  std::vector<std::vector<bool>> output_read(subsystems.size());
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    output_read[i].assign(subsystems[i]->output_size(), false);
  }
  std::size_t offset = 0;
  for (const auto& c : description.connections) {
    laws.push_back(make_law(c));
    if (c.to.size() != laws.back()->write_count()) {
      throw std::invalid_argument("connection " + c.name + ": one input list per variable");
    }
    for (const OutputRef& r : c.from) {
      if (r.subsystem >= subsystems.size() || r.output >= subsystems[r.subsystem]->output_size()) {
        throw std::invalid_argument("connection " + c.name + " reads a missing output");
      }
      output_read[r.subsystem][r.output] = true;
    }
    for (std::size_t k = 0; k < c.to.size(); ++k) {
      for (const InputRef& in : c.to[k]) {
        if (in.subsystem >= inputs.size() || in.input >= inputs[in.subsystem].size()) {
          throw std::invalid_argument("connection " + c.name + " feeds a missing input");
        }
        if (inputs[in.subsystem][in.input] != SIZE_MAX) {
          throw std::invalid_argument("connection " + c.name + " feeds an input fed already");
        }
        inputs[in.subsystem][in.input] = offset + k;
      }
    }
    offset += c.to.size();
  }
  std::vector<MonitoredOutput> monitored;
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    for (std::size_t in : inputs[i]) {
      if (in == SIZE_MAX) {
        throw std::invalid_argument("subsystem " + description.subsystems[i].name +
                                    " has an input that no connection feeds");
      }
    }
    for (std::size_t o = 0; o < output_read[i].size(); ++o) {
      control::WeightGroup group{};
      if (output_read[i][o] && is_state_output(*subsystems[i], o, group)) {
        monitored.push_back(
            {description.subsystems[i].name + "." + subsystems[i]->output_name(o), {i, o}, group});
      }
    }
  }
  return CoupledSystem(std::move(subsystems), std::move(laws), std::move(inputs),
                       std::move(monitored));
}

}  // namespace macrostep::system
