// What a user's model library implements to be a macrostep subsystem (a plugin).
//
// A plugin is a shared library built against macrostep's model headers and linked with its
// model library (the installed package's macrostep::sdk: find_package(macrostep), see
// docs/guide/plugins.md), with the same compiler and C++ standard library as macrostep (the
// subsystem object crosses the library boundary as a C++ object). It defines, once, with the
// macro below:
//
//   MACROSTEP_PLUGIN(MyModel)
//
// where MyModel derives from macrostep::model::Subsystem and has a constructor
// MyModel(const std::string& parameters_json): the [[subsystem]] table's `parameters`, as a
// JSON object text (numbers, strings, booleans, arrays, nested tables). The constructor throws
// std::exception for parameters it cannot use; the message reaches the user with the file and
// line of the configuration.
//
// Error control: the co-simulation's estimators (exMD, imMD, ...) watch the outputs that a
// connection reads and that are a position or velocity state itself, found through the coupling
// Jacobian ∂y/∂z (one nonzero entry, 1, at a state whose role is kPosition or kVelocity). The
// finite-difference defaults find them too; analytic ones (examples/duffing overrides all four
// coupling-Jacobian functions) are exact and cheaper for the implicit scheme and --monolithic.
//
// What the subsystem declares (sizes, state roles, the Jacobian pattern, the coupling patterns,
// names) is checked when it is loaded, against the limits of plugin_checks.hpp (at most
// 1,000,000 states, and an integrator's memory estimate of at most 4 GiB); a plugin that
// breaks one is refused with a message naming the library and the defect.
//
// Contract (contract 1): a plugin's subsystem is a pure function of its parameters. The master
// and every worker process each build their own instances, and results must not depend on
// which instance computes them, on global state or on the order of calls across instances
// (several are used at once by the parallel runs of a step: no shared mutable state).
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

#include "macrostep/model/subsystem.hpp"

// Bumped whenever model::Subsystem or this entry point changes incompatibly; the loader refuses
// a plugin built for another version. Version 2: Subsystem::input_is_effort; 3: state_unit,
// state_description, output_description; 4: state_nominals, output_nominal.
#define MACROSTEP_PLUGIN_API_VERSION 4

extern "C" {
// Both are defined by MACROSTEP_PLUGIN.
using macrostep_plugin_api_version_fn = std::uint32_t();
// Returns a new subsystem (owned by the caller, deleted with `delete`), or nullptr with a
// message in error[0..capacity).
using macrostep_plugin_create_fn = macrostep::model::Subsystem*(const char* parameters_json,
                                                                char* error, std::size_t capacity);
}

#define MACROSTEP_PLUGIN(ModelType)                                                                \
  extern "C" __attribute__((visibility("default"))) std::uint32_t macrostep_plugin_api_version() { \
    return MACROSTEP_PLUGIN_API_VERSION;                                                           \
  }                                                                                                \
  extern "C" __attribute__((visibility("default"))) macrostep::model::Subsystem*                   \
  macrostep_plugin_create(const char* parameters_json, char* error, std::size_t capacity) {        \
    try {                                                                                          \
      return new ModelType(std::string(parameters_json));                                          \
    } catch (const std::exception& e) {                                                            \
      if (capacity > 0) {                                                                          \
        std::strncpy(error, e.what(), capacity - 1);                                               \
        error[capacity - 1] = '\0';                                                                \
      }                                                                                            \
      return nullptr;                                                                              \
    } catch (...) {                                                                                \
      if (capacity > 0) {                                                                          \
        std::strncpy(error, "the constructor threw an exception that is not a std::exception",     \
                     capacity - 1);                                                                \
        error[capacity - 1] = '\0';                                                                \
      }                                                                                            \
      return nullptr;                                                                              \
    }                                                                                              \
  }
