// ModelDescription: what it takes to build one subsystem of the library, as data (DESIGN.md
// "subsystems/library", contract 1). The master describes every subsystem this way; a worker
// process receives the description (Cap'n Proto, subsystems/worker) and builds a subsystem that
// is equal, state for state and output for output, to the master's.
//
// One alternative per model type of the library; the process executor and the worker know only
// ModelDescription and build_subsystem(), never a model type.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "macrostep/fmu/fmu.hpp"
#include "macrostep/library/belt_drive.hpp"
#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/dc_motor.hpp"
#include "macrostep/library/drive_train.hpp"
#include "macrostep/library/hydraulic_cylinder.hpp"
#include "macrostep/library/model_registry.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/library/pid_controller.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/plugin/plugin.hpp"

namespace macrostep::library {

// Masses [first, last) of a chain (a ChainSegment). The chain's parameters are shared, not
// copied, between the descriptions of its segments.
struct ChainSegmentDescription {
  std::shared_ptr<const ChainParameters> chain;
  std::size_t first = 0, last = 0;
};

// A model of the registry (model_registry.hpp) is its name and parameter values
// (RegisteredModel): the configuration reader, the worker's Cap'n Proto encoding and the
// documentation know it through its parameter description alone. The other built-in models are
// described by their parameter structs, which do not fit a flat parameter list (a drive train's
// arrays of shaft and load tables) or are not yet in the registry. A chain segment shares its
// chain's parameters. A user's model comes as a plugin (subsystems/plugin): its library and
// JSON parameters; or as an FMI Model Exchange FMU (subsystems/fmu): its archive, start values,
// inputs and outputs.
using ModelDescription =
    std::variant<ChainSegmentDescription, DriveTrainParameters, RegisteredModel,
                 plugin::PluginDescription, fmu::FmuDescription>;

// Builds the subsystem. Throws std::invalid_argument for a description that names no model or
// an impossible one (e.g. an empty mass range).
std::unique_ptr<model::Subsystem> build_subsystem(const ModelDescription& description);

// One line for messages: "chain segment, masses 21..40 of 40", "drive-train segment of 2
// inertias", "hydraulic cylinder", "PID controller", "belt drive with tensioner idler", "plugin
// PATH", "FMU PATH".
std::string describe(const ModelDescription& description);

// A file a model reads: no output of a run may be it (runtime/output/destinations.hpp).
struct ModelFile {
  std::string what;  // for messages, without article: "input file `file`", "plugin library", "FMU"
  std::string path;  // as the description holds it (the reader made it absolute)
};

// The files `description` reads: a registered model's string parameters that name files
// (ParameterSpec::path), a plugin's library, an FMU's archive; none for the other models.
std::vector<ModelFile> model_files(const ModelDescription& description);

// The descriptions of a cut chain's segments, boundaries as library::equal_partition gives them.
std::vector<ModelDescription> chain_segment_descriptions(
    std::shared_ptr<const ChainParameters> chain, const std::vector<std::size_t>& boundaries);

}  // namespace macrostep::library
