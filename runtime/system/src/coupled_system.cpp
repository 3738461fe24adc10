// METHODS.md §1.1, §1.4 (coupled system, consistent update D-1), §5 (monitored outputs).
#include "macrostep/system/coupled_system.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace macrostep::system {

CoupledSystem::CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                             std::vector<std::unique_ptr<CouplingLaw>> laws,
                             std::vector<std::vector<std::size_t>> input_couplings,
                             std::vector<MonitoredOutput> monitored)
    : subsystems_(std::move(subsystems)),
      laws_(std::move(laws)),
      input_couplings_(std::move(input_couplings)),
      monitored_(std::move(monitored)) {
  if (subsystems_.empty()) throw std::invalid_argument("CoupledSystem: no subsystems");
  index_laws();
  check_subsystems();
  index_monitored();
}

void CoupledSystem::check_output(const OutputRef& r, const std::string& what) const {
  if (r.subsystem >= subsystems_.size() || r.output >= subsystems_[r.subsystem]->output_size()) {
    throw std::invalid_argument("CoupledSystem: " + what + " refers to a missing output");
  }
}

// Global indices and names of the laws' coupling variables; their reads must exist.
void CoupledSystem::index_laws() {
  for (const auto& law : laws_) {
    if (!law) throw std::invalid_argument("CoupledSystem: a coupling law is missing (null)");
    const auto names = law->variable_names();
    const std::string what = names.empty() ? std::string("a coupling law") : names.front();
    if (law->has_feedthrough()) {
      throw std::invalid_argument("CoupledSystem: coupling law " + what +
                                  " has feed-through, which needs the Newton update of D-1 "
                                  "(not implemented yet)");
    }
    for (const OutputRef& r : law->reads()) check_output(r, what);
    law_offsets_.push_back(coupling_names_.size());
    coupling_names_.insert(coupling_names_.end(), names.begin(), names.end());
    max_reads_ = std::max(max_reads_, law->reads().size());
  }
}

void CoupledSystem::check_subsystems() const {
  if (input_couplings_.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem: one input map per subsystem required");
  }
  for (std::size_t i = 0; i < subsystems_.size(); ++i) {
    if (subsystems_[i]->has_feedthrough()) {
      throw std::invalid_argument(
          "CoupledSystem: subsystems with direct feed-through need the Newton update of D-1, "
          "which is not implemented yet");
    }
    if (input_couplings_[i].size() != subsystems_[i]->input_size()) {
      throw std::invalid_argument("CoupledSystem: input map of subsystem " + std::to_string(i) +
                                  " does not match its input count");
    }
    for (std::size_t c : input_couplings_[i]) {
      if (c >= coupling_names_.size()) {
        throw std::invalid_argument("CoupledSystem: input map refers to a missing coupling");
      }
    }
  }
}

// The monitored outputs must exist; their groups are copied into one span for the estimators
// (which know nothing about outputs).
void CoupledSystem::index_monitored() {
  for (const auto& m : monitored_) {
    check_output(m.output, m.name);
    if (m.group != control::WeightGroup::kPosition && m.group != control::WeightGroup::kVelocity) {
      throw std::invalid_argument("CoupledSystem: monitored output " + m.name +
                                  " must be a position or a velocity");
    }
    monitored_groups_.push_back(m.group);
  }
}

std::span<const double> CoupledSystem::gather_reads(const CouplingLaw& law,
                                                    std::span<const std::vector<double>> outputs,
                                                    std::span<double> buffer) {
  const auto reads = law.reads();
  for (std::size_t j = 0; j < reads.size(); ++j) {
    buffer[j] = outputs[reads[j].subsystem][reads[j].output];
  }
  return buffer.first(reads.size());
}

void CoupledSystem::evaluate_couplings(std::span<const std::vector<double>> outputs,
                                       std::span<double> u) const {
  if (u.size() != coupling_names_.size() || outputs.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem::evaluate_couplings: size mismatch");
  }
  // A const system is shared between threads: one scratch per thread, allocated once.
  thread_local std::vector<double> y;
  if (y.size() < max_reads_) y.resize(max_reads_);
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    law.evaluate(gather_reads(law, outputs, y), u.subspan(law_offsets_[k], law.write_count()));
  }
}

void CoupledSystem::evaluate_rates(std::span<const std::vector<double>> outputs,
                                   std::span<double> u_dot) const {
  if (u_dot.size() != coupling_names_.size() || outputs.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem::evaluate_rates: size mismatch");
  }
  std::vector<double> y(max_reads_);
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    const auto out = u_dot.subspan(law_offsets_[k], law.write_count());
    if (law.has_rate()) {
      law.rate(gather_reads(law, outputs, y), out);
    } else {
      std::fill(out.begin(), out.end(), 0.0);
    }
  }
}

bool CoupledSystem::has_rate(std::size_t c) const {
  if (c >= coupling_names_.size()) throw std::out_of_range("CoupledSystem::has_rate");
  const auto k = static_cast<std::size_t>(
      std::upper_bound(law_offsets_.begin(), law_offsets_.end(), c) - law_offsets_.begin() - 1);
  return laws_[k]->has_rate();
}

void CoupledSystem::coupling_jacobian(std::size_t k, std::span<const std::vector<double>> outputs,
                                      std::span<double> dphi_dy) const {
  const CouplingLaw& law = *laws_.at(k);
  if (outputs.size() != subsystems_.size() ||
      dphi_dy.size() != law.write_count() * law.reads().size()) {
    throw std::invalid_argument("CoupledSystem::coupling_jacobian: size mismatch");
  }
  std::vector<double> y(law.reads().size());
  law.jacobian(gather_reads(law, outputs, y), dphi_dy);
}

void CoupledSystem::gather_monitored(std::span<const std::vector<double>> outputs,
                                     std::span<double> values) const {
  if (values.size() != monitored_.size()) {
    throw std::invalid_argument("CoupledSystem::gather_monitored: size mismatch");
  }
  for (std::size_t j = 0; j < monitored_.size(); ++j) {
    values[j] = outputs[monitored_[j].output.subsystem][monitored_[j].output.output];
  }
}

std::vector<double> CoupledSystem::initial_couplings() const {
  std::vector<std::vector<double>> outputs(subsystems_.size());
  for (std::size_t i = 0; i < subsystems_.size(); ++i) {
    const auto& s = *subsystems_[i];
    std::vector<double> z(s.state_size()), zp(s.state_size()), u(s.input_size(), 0.0);
    s.initial_state(u, z, zp);  // z0 does not depend on u (no feed-through)
    outputs[i].resize(s.output_size());
    s.outputs(s.initial_time(), z, u, outputs[i]);
  }
  std::vector<double> u(coupling_names_.size());
  evaluate_couplings(outputs, u);
  return u;
}

void CoupledSystem::gather_inputs(std::size_t i, std::span<const double> u,
                                  std::span<double> inputs) const {
  const auto& map = input_couplings_.at(i);
  for (std::size_t k = 0; k < map.size(); ++k) inputs[k] = u[map[k]];
}

}  // namespace macrostep::system
