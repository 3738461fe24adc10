// METHODS.md §1.3 (force/force decomposition of the chain), seed 000 Eq. 2.16-2.20.
#include "macrostep/system/chain_system.hpp"

#include <memory>
#include <stdexcept>
#include <string>

#include "macrostep/library/chain.hpp"
#include "macrostep/system/spring_damper_law.hpp"

namespace macrostep::system {

namespace {

// ChainSegment outputs: [x_first, x_last, v_first, v_last].
constexpr std::size_t kXFirst = 0, kXLast = 1, kVFirst = 2, kVLast = 3;

void check_boundaries(const std::vector<std::size_t>& boundaries, std::size_t masses) {
  if (boundaries.size() < 2 || boundaries.front() != 0 || boundaries.back() != masses) {
    throw std::invalid_argument("make_chain_system: boundaries must run from 0 to the mass count");
  }
  for (std::size_t k = 1; k < boundaries.size(); ++k) {
    if (boundaries[k] <= boundaries[k - 1]) {
      throw std::invalid_argument("make_chain_system: boundaries must be strictly increasing");
    }
  }
}

// Position and velocity of one coupling body (1-based mass index), as a monolithic run names them.
void monitor_body(std::size_t mass, std::size_t subsystem, std::size_t x, std::size_t v,
                  std::vector<MonitoredOutput>& monitored) {
  const std::string index = std::to_string(mass);
  monitored.push_back({"x_" + index, {subsystem, x}, control::WeightGroup::kPosition});
  monitored.push_back({"v_" + index, {subsystem, v}, control::WeightGroup::kVelocity});
}

}  // namespace

CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries) {
  check_boundaries(boundaries, params.size());
  const std::size_t ns = boundaries.size() - 1;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  std::vector<std::vector<std::size_t>> inputs(ns);
  for (std::size_t L = 0; L < ns; ++L) {
    subsystems.push_back(
        std::make_unique<library::ChainSegment>(params, boundaries[L], boundaries[L + 1]));
    if (L > 0) inputs[L].push_back(L - 1);   // lambda_{L-1} (0-based coupling L-1) on the left
    if (L + 1 < ns) inputs[L].push_back(L);  // lambda_L on the right
  }
  std::vector<std::unique_ptr<CouplingLaw>> laws;
  std::vector<MonitoredOutput> monitored;
  for (std::size_t L = 0; L + 1 < ns; ++L) {
    const std::size_t cut = boundaries[L + 1];  // 0-based element index = 1-based left mass
    laws.push_back(std::make_unique<SpringDamperLaw>(
        "lambda_" + std::to_string(L + 1), params.element[cut], OutputRef{L, kXLast},
        OutputRef{L, kVLast}, OutputRef{L + 1, kXFirst}, OutputRef{L + 1, kVFirst}));
    monitor_body(cut, L, kXLast, kVLast, monitored);
    monitor_body(cut + 1, L + 1, kXFirst, kVFirst, monitored);
  }
  return CoupledSystem(std::move(subsystems), std::move(laws), std::move(inputs),
                       std::move(monitored));
}

}  // namespace macrostep::system
