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
  // Whether the loader compares the plugin's analytic Jacobians with finite differences at the
  // initial state (check_initial_point); the configuration's `check_jacobians`.
  bool check_jacobians = true;
};

// Loads (once per process and path; a library stays loaded until the process ends, since its
// code backs every subsystem built from it) and builds a subsystem. Throws std::invalid_argument
// naming the library and the reason: it cannot be loaded, lacks an entry point, was built for
// another plugin API version, refuses the parameters, declares sizes, patterns or names that
// check_declarations (plugin_checks.hpp) refuses, or fails check_initial_point there (its initial
// time, its initial state, its Jacobians). The initial point is checked once per process and
// description: the master and every worker process check alike, a second build is not checked
// again.
std::unique_ptr<model::Subsystem> build_plugin_subsystem(const PluginDescription& description);

}  // namespace macrostep::plugin
