// Loading users' models (plugins): a PluginDescription names a shared library that
// implements plugin_api.hpp and the parameters to build its subsystem with. The master and each
// worker process load the library themselves (dlopen) and build their own instances.
#pragma once

#include <memory>
#include <string>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::plugin {

struct PluginDescription {
  std::string library;     // absolute path of the shared library
  std::string parameters;  // a JSON object text, handed to the plugin's constructor
};

// Loads (once per process and path; a library stays loaded until the process ends, since its
// code backs every subsystem built from it) and builds a subsystem. Throws std::invalid_argument
// naming the library and the reason: it cannot be loaded, lacks an entry point, was built for
// another plugin API version, refuses the parameters, or declares sizes, patterns or names that
// check_declarations (plugin_checks.hpp) refuses.
std::unique_ptr<model::Subsystem> build_plugin_subsystem(const PluginDescription& description);

}  // namespace macrostep::plugin
