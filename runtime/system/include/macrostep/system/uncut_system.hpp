// The monolithic form of a description that carries its uncut model (SystemDescription::whole,
// e.g. a chain lowered from the chain syntax): the uncut model is integrated as it is, and every
// connection's coupling variables are evaluated by the connection's own law (build_law) from the
// uncut model's states at the bodies the law reads, so that a monolithic run and a co-simulation
// of the same configuration compare column by column.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "macrostep/model/subsystem.hpp"
#include "macrostep/system/coupling_law.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep::system {

class UncutSystem {
 public:
  // Builds d.whole and the laws of d.connections, and finds for every output a connection reads
  // the whole model's state of the same name (Naming::kGlobal: the names are the system's).
  // Throws std::invalid_argument if d has no whole model or it lacks such a state.
  explicit UncutSystem(const SystemDescription& d);

  // The model to integrate (no inputs).
  const model::Subsystem& model() const { return *whole_; }

  // The outputs the connections read, once per name, in connection and read order (the result
  // columns without --all-states), and the index of each in the whole model's state.
  const std::vector<std::string>& read_names() const { return read_names_; }
  const std::vector<std::size_t>& read_states() const { return read_states_; }
  // The unit of each of read_names(): that of the subsystem output it stands for.
  const std::vector<std::string>& read_units() const { return read_units_; }
  // And the description of that output.
  const std::vector<std::string>& read_descriptions() const { return read_descriptions_; }

  // The coupling variables, in connection and write order (as build_system numbers them).
  const std::vector<std::string>& coupling_names() const { return coupling_names_; }
  // Their units, as CoupledSystem::coupling_unit gives them.
  const std::vector<std::string>& coupling_units() const { return coupling_units_; }
  // And their descriptions, as CoupledSystem::coupling_description gives them.
  const std::vector<std::string>& coupling_descriptions() const { return coupling_descriptions_; }
  // u = φ(y) of every law in connection order, y read from the whole model's state z
  // (u.size() == coupling_names().size()).
  void evaluate_couplings(std::span<const double> z, std::span<double> u) const;

 private:
  std::unique_ptr<model::Subsystem> whole_;
  std::vector<std::unique_ptr<CouplingLaw>> laws_;
  std::vector<std::vector<std::size_t>> law_states_;  // per law: the state index of each read
  std::vector<std::string> read_names_, coupling_names_, read_units_, coupling_units_;
  std::vector<std::string> read_descriptions_, coupling_descriptions_;
  std::vector<std::size_t> read_states_;
  mutable std::vector<double> y_read_;
};

}  // namespace macrostep::system
