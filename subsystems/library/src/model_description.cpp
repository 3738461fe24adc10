// ModelDescription (model_description.hpp).
#include "macrostep/library/model_description.hpp"

#include <stdexcept>

#include "macrostep/library/chain.hpp"
#include "macrostep/library/drive_train.hpp"
#include "macrostep/library/hydraulic_cylinder.hpp"
#include "macrostep/library/pid_controller.hpp"

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
  using Built = std::unique_ptr<model::Subsystem>;
  return std::visit(
      Overloaded{[](const ChainSegmentDescription& d) -> Built {
                   if (!d.chain) {
                     throw std::invalid_argument("chain segment description without a chain");
                   }
                   return std::make_unique<ChainSegment>(*d.chain, d.first, d.last);
                 },
                 [](const DriveTrainParameters& p) -> Built {
                   return std::make_unique<DriveTrainSegment>(p);
                 },
                 [](const RegisteredModel& m) -> Built {
                   const ModelEntry* entry = find_model(m.model);
                   if (entry == nullptr)
                     throw std::invalid_argument("unknown model \"" + m.model + "\"");
                   return entry->build(m.values);
                 },
                 [](const plugin::PluginDescription& p) -> Built {
                   return plugin::build_plugin_subsystem(p);
                 },
                 [](const fmu::FmuDescription& f) -> Built { return fmu::build_fmu_subsystem(f); }},
      description);
}

std::string describe(const ModelDescription& description) {
  return std::visit(
      Overloaded{
          [](const ChainSegmentDescription& d) {
            return "chain segment, masses " + std::to_string(d.first + 1) + ".." +
                   std::to_string(d.last) + " of " + std::to_string(d.chain ? d.chain->size() : 0);
          },
          [](const DriveTrainParameters& p) {
            return "drive-train segment of " + std::to_string(p.inertia.size()) + " inertias";
          },
          [](const RegisteredModel& m) {
            const ModelEntry* entry = find_model(m.model);
            return entry != nullptr && entry->describe ? entry->describe(m.values) : m.model;
          },
          [](const plugin::PluginDescription& p) { return "plugin " + p.library; },
          [](const fmu::FmuDescription& f) { return "FMU " + f.path; }},
      description);
}

std::vector<ModelFile> model_files(const ModelDescription& description) {
  std::vector<ModelFile> files;
  if (const auto* m = std::get_if<RegisteredModel>(&description)) {
    const ModelEntry* entry = find_model(m->model);
    if (entry == nullptr) return files;
    for (const ParameterSpec& spec : entry->parameters) {
      const ParameterValue* value = spec.path ? m->values.find(spec.name) : nullptr;
      const auto* path = value != nullptr ? std::get_if<std::string>(value) : nullptr;
      if (path != nullptr && !path->empty())
        files.push_back({"input file `" + spec.name + "`", *path});
    }
  } else if (const auto* p = std::get_if<plugin::PluginDescription>(&description)) {
    files.push_back({"plugin library", p->library});
  } else if (const auto* f = std::get_if<fmu::FmuDescription>(&description)) {
    files.push_back({"FMU", f->path});
  }
  return files;
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
