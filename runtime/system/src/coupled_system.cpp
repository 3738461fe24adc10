// METHODS.md §1.3 (force/force decomposition), seed 000 Eq. 2.16-2.20.
#include "macrostep/system/coupled_system.hpp"

#include <stdexcept>
#include <string>

#include "macrostep/library/chain.hpp"

namespace macrostep::system {

CoupledSystem::CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                             std::vector<ForceCoupling> couplings,
                             std::vector<std::vector<std::size_t>> input_couplings,
                             std::vector<CouplingBody> coupling_bodies)
    : subsystems_(std::move(subsystems)),
      couplings_(std::move(couplings)),
      input_couplings_(std::move(input_couplings)),
      bodies_(std::move(coupling_bodies)) {
  if (subsystems_.empty()) throw std::invalid_argument("CoupledSystem: no subsystems");
  if (input_couplings_.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem: one input map per subsystem required");
  }
  auto check_ref = [&](const OutputRef& r, const std::string& what) {
    if (r.subsystem >= subsystems_.size() || r.output >= subsystems_[r.subsystem]->output_size()) {
      throw std::invalid_argument("CoupledSystem: " + what + " refers to a missing output");
    }
  };
  for (const auto& c : couplings_) {
    check_ref(c.x_left, c.name);
    check_ref(c.v_left, c.name);
    check_ref(c.x_right, c.name);
    check_ref(c.v_right, c.name);
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
      if (c >= couplings_.size()) {
        throw std::invalid_argument("CoupledSystem: input map refers to a missing coupling");
      }
    }
  }
  for (const auto& b : bodies_) {
    check_ref(b.x, b.x_name);
    check_ref(b.v, b.v_name);
  }
}

void CoupledSystem::evaluate_couplings(std::span<const std::vector<double>> outputs,
                                       std::span<double> u) const {
  for (std::size_t c = 0; c < couplings_.size(); ++c) {
    const auto& k = couplings_[c];
    const double dx = outputs[k.x_right.subsystem][k.x_right.output] -
                      outputs[k.x_left.subsystem][k.x_left.output];
    const double dv = outputs[k.v_right.subsystem][k.v_right.output] -
                      outputs[k.v_left.subsystem][k.v_left.output];
    u[c] = k.law.force(dx, dv);
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
  std::vector<double> u(couplings_.size());
  evaluate_couplings(outputs, u);
  return u;
}

void CoupledSystem::gather_inputs(std::size_t i, std::span<const double> u,
                                  std::span<double> inputs) const {
  const auto& map = input_couplings_.at(i);
  for (std::size_t k = 0; k < map.size(); ++k) inputs[k] = u[map[k]];
}

CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries) {
  const std::size_t n = params.size();
  if (boundaries.size() < 2 || boundaries.front() != 0 || boundaries.back() != n) {
    throw std::invalid_argument("make_chain_system: boundaries must run from 0 to the mass count");
  }
  for (std::size_t k = 1; k < boundaries.size(); ++k) {
    if (boundaries[k] <= boundaries[k - 1]) {
      throw std::invalid_argument("make_chain_system: boundaries must be strictly increasing");
    }
  }
  const std::size_t ns = boundaries.size() - 1;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  std::vector<std::vector<std::size_t>> inputs(ns);
  for (std::size_t L = 0; L < ns; ++L) {
    subsystems.push_back(
        std::make_unique<library::ChainSegment>(params, boundaries[L], boundaries[L + 1]));
    if (L > 0) inputs[L].push_back(L - 1);   // lambda_{L-1} (0-based coupling L-1) on the left
    if (L + 1 < ns) inputs[L].push_back(L);  // lambda_L on the right
  }
  // ChainSegment outputs: [x_first, x_last, v_first, v_last].
  std::vector<ForceCoupling> couplings;
  std::vector<CouplingBody> bodies;
  for (std::size_t L = 0; L + 1 < ns; ++L) {
    ForceCoupling c;
    c.name = "lambda_" + std::to_string(L + 1);
    c.law = params.element[boundaries[L + 1]];
    c.x_left = {L, 1};
    c.v_left = {L, 3};
    c.x_right = {L + 1, 0};
    c.v_right = {L + 1, 2};
    couplings.push_back(c);
    const std::size_t left_mass = boundaries[L + 1];  // 1-based index of the last body of L
    const std::size_t right_mass = boundaries[L + 1] + 1;
    bodies.push_back(
        {"x_" + std::to_string(left_mass), "v_" + std::to_string(left_mass), {L, 1}, {L, 3}});
    bodies.push_back({"x_" + std::to_string(right_mass),
                      "v_" + std::to_string(right_mass),
                      {L + 1, 0},
                      {L + 1, 2}});
  }
  return CoupledSystem(std::move(subsystems), std::move(couplings), std::move(inputs),
                       std::move(bodies));
}

}  // namespace macrostep::system
