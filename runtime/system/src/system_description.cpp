// SystemDescription → CoupledSystem (system_description.hpp; METHODS.md §1.1, §5).
#include "macrostep/system/system_description.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace macrostep::system {

namespace {

const LawEntry& entry_of(const DescribedConnection& c) {
  if (const LawEntry* e = find_law(c.law)) return *e;
  throw std::invalid_argument("connection " + c.name + ": unknown coupling law \"" + c.law + "\"");
}

}  // namespace

std::unique_ptr<CouplingLaw> build_law(const DescribedConnection& c) {
  const LawEntry& entry = entry_of(c);
  if ((entry.reads > 0 && c.from.size() != entry.reads) || c.from.empty()) {
    throw std::invalid_argument("connection " + c.name + ": wrong number of outputs read");
  }
  if (!c.parameters) {
    throw std::invalid_argument("connection " + c.name + ": no parameters for its law");
  }
  return entry.make(coupling_names(c), c.from, *c.parameters);
}

namespace {

// True if output `o` of `s` is one of its states, taken as it is (∂y/∂z a single nonzero entry 1
// at the initial state); `group` receives the weight group: a position's, or a velocity's for a
// velocity and for a state of another role (an FMU's first-order state, a controller's integral,
// a current). Such a state takes the inputs through its derivative, one integration as a
// velocity does, so its error follows the velocity's constants (METHODS §5.1); without it a
// system of first-order states would leave the state estimators nothing to watch. The
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
  group = s.state_roles()[column] == model::StateRole::kPosition ? control::WeightGroup::kPosition
                                                                 : control::WeightGroup::kVelocity;
  return true;
}

// The monitored outputs (build_system) under `naming`; output_read[i][o]: a connection reads
// output o of subsystem i.
std::vector<MonitoredOutput> monitored_outputs(
    const SystemDescription& d, const std::vector<std::unique_ptr<model::Subsystem>>& subsystems,
    const std::vector<std::vector<bool>>& output_read) {
  std::vector<MonitoredOutput> monitored;
  const auto watch = [&](const OutputRef& r) {
    control::WeightGroup group{};
    if (is_state_output(*subsystems[r.subsystem], r.output, group)) {
      monitored.push_back(
          {variable_name(d, r.subsystem, subsystems[r.subsystem]->output_name(r.output)), r,
           group});
    }
  };
  if (d.naming == Naming::kGlobal) {
    for (const auto& c : d.connections) {
      for (const OutputRef& r : c.from) watch(r);
    }
    return monitored;
  }
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    for (std::size_t o = 0; o < output_read[i].size(); ++o) {
      if (output_read[i][o]) watch({i, o});
    }
  }
  return monitored;
}

}  // namespace

std::vector<std::size_t> ChainOrigin::coupling_bodies() const {
  std::vector<std::size_t> bodies;
  // Interior boundary b (0-based first mass of the next subsystem) cuts element b+1, between
  // the 1-based masses b and b+1.
  for (std::size_t k = 1; k + 1 < boundaries.size(); ++k) {
    bodies.push_back(boundaries[k]);
    bodies.push_back(boundaries[k] + 1);
  }
  return bodies;
}

std::string variable_name(const SystemDescription& d, std::size_t i, const std::string& local) {
  return d.naming == Naming::kGlobal ? local : d.subsystems.at(i).name + "." + local;
}

std::vector<NamedOutput> result_outputs(const SystemDescription& d, const CoupledSystem& system) {
  std::vector<NamedOutput> out;
  if (d.naming == Naming::kGlobal) {
    // A subsystem of one mass has that mass on both sides: one column for it.
    std::set<std::string> seen;
    for (const auto& m : system.monitored_outputs()) {
      if (seen.insert(m.name).second) out.push_back({m.name, m.output});
    }
    return out;
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto& sub = system.subsystem(i);
    for (std::size_t o : distinct_outputs(sub)) {
      out.push_back({variable_name(d, i, sub.output_name(o)), {i, o}});
    }
  }
  return out;
}

std::vector<std::string> coupling_names(const DescribedConnection& connection) {
  const LawEntry& entry = entry_of(connection);
  if (entry.writes.size() == 1) return {connection.name};
  std::vector<std::string> names;
  for (const LawWrite& w : entry.writes) names.push_back(connection.name + "." + w.suffix);
  return names;
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
  InputFeeds inputs;
  for (const auto& d : description.subsystems) {
    subsystems.push_back(library::build_subsystem(d.model));
    inputs.emplace_back(subsystems.back()->input_size());
  }
  std::vector<std::unique_ptr<CouplingLaw>> laws;
  std::vector<std::vector<bool>> output_read(subsystems.size());
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    output_read[i].assign(subsystems[i]->output_size(), false);
  }
  std::size_t offset = 0;
  for (const auto& c : description.connections) {
    laws.push_back(build_law(c));
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
        // Feeds in connection order: an effort input is their sum (CoupledSystem refuses a
        // second feed into any other input).
        if (!inputs[in.subsystem][in.input].empty() &&
            !subsystems[in.subsystem]->input_is_effort(in.input)) {
          throw std::invalid_argument("connection " + c.name + " feeds an input fed already");
        }
        inputs[in.subsystem][in.input].push_back(offset + k);
      }
    }
    offset += c.to.size();
  }
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    for (const auto& feeds : inputs[i]) {
      if (feeds.empty()) {
        throw std::invalid_argument("subsystem " + description.subsystems[i].name +
                                    " has an input that no connection feeds");
      }
    }
  }
  std::vector<MonitoredOutput> monitored = monitored_outputs(description, subsystems, output_read);
  return CoupledSystem::with_input_feeds(std::move(subsystems), std::move(laws), std::move(inputs),
                                         std::move(monitored));
}

}  // namespace macrostep::system
