// METHODS.md §1.3 (force/force decomposition of the chain), seed 000 Eq. 2.16-2.20.
#include "macrostep/system/chain_system.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "macrostep/system/spring_damper_law.hpp"

namespace macrostep::system {

namespace {

// ChainSegment outputs: [x_first, x_last, v_first, v_last].
constexpr std::size_t kXFirst = 0, kXLast = 1, kVFirst = 2, kVLast = 3;

void check_boundaries(const std::vector<std::size_t>& boundaries, std::size_t masses) {
  if (boundaries.size() < 2 || boundaries.front() != 0 || boundaries.back() != masses) {
    throw std::invalid_argument("chain_description: boundaries must run from 0 to the mass count");
  }
  for (std::size_t k = 1; k < boundaries.size(); ++k) {
    if (boundaries[k] <= boundaries[k - 1]) {
      throw std::invalid_argument("chain_description: boundaries must be strictly increasing");
    }
  }
}

}  // namespace

SystemDescription chain_description(std::shared_ptr<const library::ChainParameters> chain,
                                    const std::vector<std::size_t>& boundaries) {
  if (!chain) throw std::invalid_argument("chain_description: no chain");
  check_boundaries(boundaries, chain->size());
  const std::size_t ns = boundaries.size() - 1;
  SystemDescription d;
  d.naming = Naming::kGlobal;
  const auto segments = library::chain_segment_descriptions(chain, boundaries);
  for (std::size_t L = 0; L < ns; ++L) {
    d.subsystems.push_back({"segment_" + std::to_string(L + 1), segments[L]});
  }
  for (std::size_t L = 0; L + 1 < ns; ++L) {
    DescribedConnection c;
    c.name = "lambda_" + std::to_string(L + 1);
    c.law = "spring_damper";
    // 0-based element index = 1-based left mass
    c.parameters =
        std::make_shared<const SpringDamperParameters>(chain->element[boundaries[L + 1]]);
    c.from = {{L, kXLast}, {L, kVLast}, {L + 1, kXFirst}, {L + 1, kVFirst}};
    // A segment's inputs are [left cut, right cut], each only where it is cut.
    c.to = {{{L, L > 0 ? std::size_t{1} : std::size_t{0}}, {L + 1, 0}}};
    d.connections.push_back(std::move(c));
  }
  d.whole = library::ChainSegmentDescription{chain, 0, chain->size()};
  d.chain = ChainOrigin{std::move(chain), 0, boundaries};
  return d;
}

CoupledSystem make_chain_system(const library::ChainParameters& params,
                                const std::vector<std::size_t>& boundaries) {
  return build_system(
      chain_description(std::make_shared<const library::ChainParameters>(params), boundaries));
}

}  // namespace macrostep::system
