// The uncut monolithic form of a description (uncut_system.hpp).
#include "macrostep/system/uncut_system.hpp"

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace macrostep::system {

UncutSystem::UncutSystem(const SystemDescription& d) {
  if (!d.whole) throw std::invalid_argument("UncutSystem: the description has no uncut model");
  whole_ = library::build_subsystem(*d.whole);
  if (whole_->input_size() != 0) {
    throw std::invalid_argument("UncutSystem: the uncut model must have no inputs");
  }
  std::unordered_map<std::string, std::size_t> state_of;
  for (std::size_t j = 0; j < whole_->state_size(); ++j) state_of.emplace(whole_->state_name(j), j);
  // The names of the outputs each subsystem has read: its model is built once, then dropped.
  std::vector<std::vector<std::string>> output_names(d.subsystems.size()),
      output_units(d.subsystems.size()), output_descriptions(d.subsystems.size());
  for (const auto& c : d.connections) {
    for (const OutputRef& r : c.from) {
      if (r.subsystem >= d.subsystems.size()) {
        throw std::invalid_argument("connection " + c.name + " reads a missing output");
      }
      auto& names = output_names[r.subsystem];
      if (!names.empty()) continue;
      const auto built = library::build_subsystem(d.subsystems[r.subsystem].model);
      for (std::size_t o = 0; o < built->output_size(); ++o) {
        names.push_back(built->output_name(o));
        output_units[r.subsystem].push_back(built->output_unit(o));
        output_descriptions[r.subsystem].push_back(built->output_description(o));
      }
    }
  }
  std::unordered_set<std::string> listed;
  for (const auto& c : d.connections) {
    laws_.push_back(build_law(c));
    std::vector<std::size_t> states;
    std::vector<std::string> units;  // of the law's reads
    for (const OutputRef& r : c.from) {
      const auto& names = output_names[r.subsystem];
      if (r.output >= names.size()) {
        throw std::invalid_argument("connection " + c.name + " reads a missing output");
      }
      const std::string name = variable_name(d, r.subsystem, names[r.output]);
      const auto it = state_of.find(name);
      if (it == state_of.end()) {
        throw std::invalid_argument("UncutSystem: the uncut model has no state named " + name);
      }
      states.push_back(it->second);
      units.push_back(output_units[r.subsystem][r.output]);
      if (listed.insert(name).second) {
        read_names_.push_back(name);
        read_units_.push_back(units.back());
        read_descriptions_.push_back(output_descriptions[r.subsystem][r.output]);
        read_states_.push_back(it->second);
      }
    }
    law_states_.push_back(std::move(states));
    for (const auto& v : laws_.back()->variable_names()) coupling_names_.push_back(v);
    units = laws_.back()->variable_units(units);
    units.resize(laws_.back()->write_count());
    coupling_units_.insert(coupling_units_.end(), units.begin(), units.end());
    std::vector<std::string> descriptions = laws_.back()->variable_descriptions();
    descriptions.resize(laws_.back()->write_count());
    coupling_descriptions_.insert(coupling_descriptions_.end(), descriptions.begin(),
                                  descriptions.end());
  }
}

void UncutSystem::evaluate_couplings(std::span<const double> z, std::span<double> u) const {
  if (u.size() != coupling_names_.size()) {
    throw std::invalid_argument("UncutSystem::evaluate_couplings: size mismatch");
  }
  std::size_t offset = 0;
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const auto& states = law_states_[k];
    y_read_.resize(states.size());
    for (std::size_t j = 0; j < states.size(); ++j) y_read_[j] = z[states[j]];
    const std::size_t n = laws_[k]->write_count();
    laws_[k]->evaluate(y_read_, u.subspan(offset, n));
    offset += n;
  }
}

}  // namespace macrostep::system
