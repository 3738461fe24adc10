// ModelDescription (model_description.hpp).
#include "macrostep/library/model_description.hpp"

#include <stdexcept>

#include "macrostep/library/chain.hpp"

namespace macrostep::library {

namespace {

// std::visit with one lambda per alternative.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::unique_ptr<model::Subsystem> build_subsystem(const ModelDescription& description) {
  return std::visit(
      Overloaded{[](const ChainSegmentDescription& d) -> std::unique_ptr<model::Subsystem> {
        if (!d.chain) throw std::invalid_argument("chain segment description without a chain");
        return std::make_unique<ChainSegment>(*d.chain, d.first, d.last);
      }},
      description);
}

std::string describe(const ModelDescription& description) {
  return std::visit(Overloaded{[](const ChainSegmentDescription& d) {
                      return "chain segment, masses " + std::to_string(d.first + 1) + ".." +
                             std::to_string(d.last) + " of " +
                             std::to_string(d.chain ? d.chain->size() : 0);
                    }},
                    description);
}

std::vector<ModelDescription> chain_segment_descriptions(
    std::shared_ptr<const ChainParameters> chain, const std::vector<std::size_t>& boundaries) {
  std::vector<ModelDescription> out;
  for (std::size_t k = 0; k + 1 < boundaries.size(); ++k) {
    out.emplace_back(ChainSegmentDescription{chain, boundaries[k], boundaries[k + 1]});
  }
  return out;
}

}  // namespace macrostep::library
