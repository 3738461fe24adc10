// The [[subsystem]] tables of users' models: plugins and FMUs (system_config.hpp).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "macrostep/model/names.hpp"
#include "system_config.hpp"

namespace macrostep::config::detail {

namespace {

// A plugin's parameters as the JSON its constructor reads (plugin_api.hpp).
nlohmann::json to_json(const Node& n) {
  if (n.is_table()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [key, item] : n.entries()) j[key] = to_json(item);
    return j;
  }
  if (n.is_array()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : n.elements()) j.push_back(to_json(item));
    return j;
  }
  if (n.is_boolean()) return n.boolean();
  if (n.is_string()) return n.string();
  if (n.is_integer()) return n.integer();
  if (n.is_float()) return n.number();
  n.fail("must be a number, string, boolean, array or table (dates are not plugin parameters)");
}

// A start value is a number or a boolean, or for an FMI 3 array variable an array of them
// (nested by dimension, or flat in row-major order); the FMU checks the count.
void check_start_value(const Node& value) {
  if (value.is_array()) {
    for (const Node& element : value.elements()) check_start_value(element);
    return;
  }
  if (!value.is_float() && !value.is_integer() && !value.is_boolean()) {
    value.fail(
        "must be a number or a boolean, or an array of them (a start value of the FMU's "
        "variable)");
  }
}

}  // namespace

// `library` (absolute, or relative to the configuration's directory), `parameters` and
// `check_jacobians`.
plugin::PluginDescription plugin_model(const Node& n) {
  n.allow_only(subsystem_keys("plugin"), " for a plugin");
  plugin::PluginDescription d;
  d.library = resolved_path(n.require("library"), "must name the plugin's shared library");
  nlohmann::json parameters = nlohmann::json::object();
  if (auto p = n.find("parameters")) {
    p->expect_table();
    parameters = to_json(*p);
  }
  d.parameters = parameters.dump();
  if (auto check = n.find("check_jacobians")) d.check_jacobians = check->boolean();
  return d;
}

// An FMI Model Exchange or Co-Simulation FMU (subsystems/fmu): `path` (absolute, or relative to
// the configuration's directory), `parameters` (start values by variable name), `inputs` and
// `outputs` (variable names; by default every Real input / output of the FMU), `interface`
// ("model-exchange" or "co-simulation"; by default Model Exchange where the FMU has it).
fmu::FmuDescription fmu_model(const Node& n) {
  n.allow_only(subsystem_keys("fmu"), " for an FMU");
  fmu::FmuDescription d;
  d.path = resolved_path(n.require("path"), "must name the .fmu file");
  nlohmann::json parameters = nlohmann::json::object();
  if (auto p = n.find("parameters")) {
    p->expect_table();
    for (const auto& [key, value] : p->entries()) {
      if (const auto at = model::control_character(key)) {
        p->fail(fmt::format("the variable name {} contains a control character (byte {})",
                            model::quoted(key), *at));
      }
      check_start_value(value);
    }
    parameters = to_json(*p);
  }
  d.parameters = parameters.dump();
  d.inputs_listed = n.find("inputs").has_value();
  for (const char* key : {"inputs", "outputs"}) {
    if (auto list = n.find(key)) {
      for (const Node& name : list->elements()) {
        (std::string(key) == "inputs" ? d.inputs : d.outputs).push_back(user_name(name));
      }
    }
  }
  if (auto interface = n.find("interface")) {
    d.interface = interface->string();
    if (d.interface != fmu::kInterfaceNames[0] && d.interface != fmu::kInterfaceNames[1]) {
      interface->fail(fmt::format("must be \"{}\" or \"{}\" (got {})", fmu::kInterfaceNames[0],
                                  fmu::kInterfaceNames[1], model::quoted(d.interface)));
    }
  }
  return d;
}

}  // namespace macrostep::config::detail
