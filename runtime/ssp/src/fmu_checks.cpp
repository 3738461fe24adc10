// What an SSP says about its FMUs' variables checked against their model descriptions
// (model.hpp, check_against_fmus), with its units converted (units.hpp). A parameter value is
// converted into its variable's unit; a connection's value goes from the output variable's unit
// to its connector's, through the ssc:LinearTransformation (in the output connector's unit), to
// the input connector's unit (unless suppressUnitConversion) and to the input variable's: all of
// it one affine map, the signal law's gain and offset. Units that cannot be converted, values a
// variable's type cannot take and names of no variable are refused where the SSP says them.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/fmu/fmu.hpp"
#include "model.hpp"

namespace macrostep::ssp::detail {

namespace {

constexpr const char* kTypeNames[] = {"Real", "Integer", "Boolean", "other"};

// The number a parameter literal (model.hpp: a TOML float, integer, true or false) stands for.
double literal_value(const std::string& literal) {
  if (literal == "true") return 1.0;
  if (literal == "false") return 0.0;
  double v = 0.0;
  std::from_chars(literal.data(), literal.data() + literal.size(), v);
  return v;
}

// Where a unit is looked up, nearest first: a value's in its parameter set, then the SSD, then
// the FMU; a connector's in the SSD, then the FMU; an FMU variable's in the FMU, then the SSD.
UnitUse ssd_unit(const SystemModel& s, const Component& c, const std::string& unit) {
  return {unit, {&s.units, &c.fmu_units}};
}

UnitUse fmu_unit(const SystemModel& s, const Component& c, const std::string& unit) {
  return {unit, {&c.fmu_units, &s.units}};
}

// The unit a connector's values are in: its own, else its variable's (SSP 1.0 §4.5.1.1).
UnitUse connector_unit(const SystemModel& s, const Component& c, const Connector& k) {
  return k.unit.empty() ? fmu_unit(s, c, k.variable_unit) : ssd_unit(s, c, k.unit);
}

// conversion(), refused at `at` with `what` before the reason.
Affine converted(const UnitUse& from, const UnitUse& to, const Origin& at,
                 const std::string& what) {
  try {
    return conversion(from, to);
  } catch (const std::invalid_argument& e) {
    throw SspError(at, what + ": " + e.what());
  }
}

// From a connector's unit to its FMU variable's (the identity where either has none).
Affine connector_to_variable(const SystemModel& s, const Component& c, const Connector& k) {
  return converted(ssd_unit(s, c, k.unit), fmu_unit(s, c, k.variable_unit), k.origin,
                   fmt::format("its unit \"{}\" and the unit \"{}\" of FMU variable {}.{}", k.unit,
                               k.variable_unit, c.name, k.name));
}

// Converts the value of parameter `name` of `c` into its variable's unit: from the value's unit
// to its connector's, if the connector gives one, and from there to the variable's (a value
// without a unit is in the connector's unit, else the variable's). Checks its type.
void convert_parameter(const SystemModel& s, const Component& c, const std::string& name,
                       ParameterValue& value, const fmu::VariableFacts& variable) {
  const Connector* k = c.connector(name);
  const UnitUse given{value.unit, {value.set_units.get(), &s.units, &c.fmu_units}};
  Affine map;
  if (k != nullptr && !k->unit.empty()) {
    map = converted(given, ssd_unit(s, c, k->unit), value.origin,
                    fmt::format("has unit \"{}\", connector {}.{} (line {}) has unit \"{}\"",
                                value.unit, c.name, name, k->origin.line, k->unit));
    map = map.then(connector_to_variable(s, c, *k));
  } else {
    map = converted(given, fmu_unit(s, c, variable.unit), value.origin,
                    fmt::format("has unit \"{}\", FMU variable {}.{} has unit \"{}\"", value.unit,
                                c.name, name, variable.unit));
  }
  if (!map.identity()) {
    const double v = map(literal_value(value.literal));
    if (!std::isfinite(v)) {
      throw SspError(value.origin, fmt::format("{} {} is not finite in the unit of {}.{}",
                                               value.literal, value.unit, c.name, name));
    }
    value.converted_from = fmt::format("{} {}", value.literal, value.unit);
    value.literal = float_literal(v);
  }
  const double v = literal_value(value.literal);
  if (const std::string problem = fmu::start_value_problem(variable.type, v); !problem.empty()) {
    throw SspError(value.origin,
                   fmt::format("value {} for {}.{} (an FMU variable of type {}): {}", value.literal,
                               c.name, name, kTypeNames[static_cast<int>(variable.type)], problem));
  }
}

// Fills the connectors' variable units and the FMU's units, checks that each connector's unit
// converts to its variable's, and converts the parameter values of `c`.
void check_component(const SystemModel& s, Component& c) {
  std::vector<std::string> names;
  for (const Connector& k : c.connectors) names.push_back(k.name);
  for (const auto& [name, value] : c.parameters) names.push_back(name);
  fmu::FmuFacts facts;
  try {
    facts = fmu::describe_fmu(c.fmu_disk, names);
  } catch (const std::invalid_argument&) {
    return;  // the FMU subsystem refuses the FMU, naming the component
  }
  for (const fmu::UnitFacts& u : facts.units) {
    c.fmu_units.emplace(u.name, UnitDefinition{u, "the model description of " + c.fmu});
  }
  std::size_t at = 0;
  for (Connector& k : c.connectors) {
    if (const auto& f = facts.variables[at++]) k.variable_unit = f->unit;
    // A calculated parameter is not coupled and has no value here: nothing to check.
    if (k.kind != "calculatedParameter") connector_to_variable(s, c, k);
  }
  for (auto& [name, value] : c.parameters) {
    const auto& f = facts.variables[at++];
    // SSP 1.0 §5.2.3 ignores such a value; refused, so that a misspelt name does not pass.
    if (!f) {
      throw SspError(value.origin,
                     fmt::format("\"{}\" names no variable of the FMU of component {} ({}): "
                                 "give a set the FMU's variable names",
                                 name, c.name, c.fmu));
    }
    convert_parameter(s, c, name, value, *f);
  }
}

const Component& component_of(const SystemModel& system, const std::string& name) {
  for (const Component& c : system.components) {
    if (c.name == name) return c;
  }
  throw std::logic_error("a connection names a component that was not read");
}

// "\"m\"", with where it comes from when the connector does not give it.
std::string unit_text(const Connector& k, const std::string& element) {
  const std::string& unit = k.effective_unit();
  return k.unit.empty() ? fmt::format("\"{}\" (of FMU variable {}.{})", unit, element, k.name)
                        : fmt::format("\"{}\"", unit);
}

// Folds the unit conversions of connection `c` into its gain and offset: output variable ->
// output connector -> transformation -> input connector (unless suppressUnitConversion) -> input
// variable. The transformation works in the output connector's unit.
void convert_connection(const SystemModel& s, Connection& c) {
  const Component& from_c = component_of(s, c.start_element);
  const Component& to_c = component_of(s, c.end_element);
  const Connector& from = *from_c.connector(c.start_connector);
  const Connector& to = *to_c.connector(c.end_connector);
  const Affine given{c.gain ? literal_value(*c.gain) : 1.0,
                     c.offset ? literal_value(*c.offset) : 0.0};
  // check_component refused a connector whose unit does not convert to its variable's.
  Affine map = conversion(fmu_unit(s, from_c, from.variable_unit), ssd_unit(s, from_c, from.unit))
                   .then(given);
  if (!c.suppress_unit_conversion) {
    map = map.then(
        converted(connector_unit(s, from_c, from), connector_unit(s, to_c, to), c.origin,
                  fmt::format("joins unit {} to unit {} (or convert with an "
                              "ssc:LinearTransformation and suppressUnitConversion = "
                              "\"true\")",
                              unit_text(from, c.start_element), unit_text(to, c.end_element))));
  }
  map = map.then(connector_to_variable(s, to_c, to));
  if (map.gain == given.gain && map.offset == given.offset) return;
  c.conversion_note = fmt::format("gain and offset convert from {} to {}",
                                  unit_text(from, c.start_element), unit_text(to, c.end_element));
  c.gain = float_literal(map.gain);
  if (map.offset != 0.0 || c.offset) c.offset = float_literal(map.offset);
}

}  // namespace

void check_against_fmus(SystemModel& system) {
  for (Component& c : system.components) check_component(system, c);
  for (Connection& c : system.connections) convert_connection(system, c);
}

}  // namespace macrostep::ssp::detail
