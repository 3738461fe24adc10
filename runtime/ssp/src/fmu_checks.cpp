// What an SSP says about its FMUs' variables checked against their model descriptions
// (model.hpp, check_against_fmus). macrostep converts no units and rounds no values: a parameter
// value in another unit than its variable's, a value its variable's type cannot take, and a
// connection between two units are refused where the SSP says them, with what to do.
#include <fmt/format.h>

#include <charconv>
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

// The unit a value of parameter `name` of `c` must have: its connector's, else its variable's.
void check_parameter(const Component& c, const std::string& name, const ParameterValue& value,
                     const fmu::VariableFacts& variable) {
  const Connector* k = c.connector(name);
  const std::string& unit = k != nullptr && !k->unit.empty() ? k->unit : variable.unit;
  if (!value.unit.empty() && !unit.empty() && value.unit != unit) {
    const std::string whose =
        k != nullptr && !k->unit.empty()
            ? fmt::format("connector {}.{} (line {})", c.name, name, k->origin.line)
            : fmt::format("FMU variable {}.{}", c.name, name);
    throw SspError(value.origin,
                   fmt::format("has unit \"{}\", {} has unit \"{}\": macrostep converts no units; "
                               "give the value in \"{}\"",
                               value.unit, whose, unit, unit));
  }
  const double v = literal_value(value.literal);
  if (const std::string problem = fmu::start_value_problem(variable.type, v); !problem.empty()) {
    throw SspError(value.origin,
                   fmt::format("value {} for {}.{} (an FMU variable of type {}): {}", value.literal,
                               c.name, name, kTypeNames[static_cast<int>(variable.type)], problem));
  }
}

// Fills the connectors' variable units and checks the parameter values of `c`.
void check_component(Component& c) {
  std::vector<std::string> names;
  for (const Connector& k : c.connectors) names.push_back(k.name);
  for (const auto& [name, value] : c.parameters) names.push_back(name);
  std::vector<std::optional<fmu::VariableFacts>> facts;
  try {
    facts = fmu::describe_variables(c.fmu_disk, names);
  } catch (const std::invalid_argument&) {
    return;  // the FMU subsystem refuses the FMU, naming the component
  }
  std::size_t at = 0;
  for (Connector& k : c.connectors) {
    if (const auto& f = facts[at++]) k.variable_unit = f->unit;
  }
  for (const auto& [name, value] : c.parameters) {
    const auto& f = facts[at++];
    // SSP 1.0 §5.2.3 ignores such a value; refused, so that a misspelt name does not pass.
    if (!f) {
      throw SspError(value.origin,
                     fmt::format("\"{}\" names no variable of the FMU of component {} ({}): "
                                 "give a set the FMU's variable names",
                                 name, c.name, c.fmu));
    }
    check_parameter(c, name, value, *f);
  }
}

const Connector& connector_of(const SystemModel& system, const std::string& component,
                              const std::string& connector) {
  for (const Component& c : system.components) {
    if (c.name == component) return *c.connector(connector);
  }
  throw std::logic_error("a connection names a component that was not read");
}

// "\"m\"", with where it comes from when the connector does not give it.
std::string unit_text(const Connector& k, const std::string& element) {
  const std::string& unit = k.effective_unit();
  return k.unit.empty() ? fmt::format("\"{}\" (of FMU variable {}.{})", unit, element, k.name)
                        : fmt::format("\"{}\"", unit);
}

// A connection joins one unit (a connector without one has its variable's, SSP 1.0 §4.5.1.1),
// unless it says the conversion is suppressed (its transformation converts).
void check_connection(const SystemModel& system, const Connection& c) {
  const Connector& from = connector_of(system, c.start_element, c.start_connector);
  const Connector& to = connector_of(system, c.end_element, c.end_connector);
  const std::string &a = from.effective_unit(), &b = to.effective_unit();
  if (a.empty() || b.empty() || a == b || c.suppress_unit_conversion) return;
  throw SspError(c.origin,
                 fmt::format("joins unit {} to unit {}: unit conversions are not supported "
                             "(convert with an ssc:LinearTransformation and "
                             "suppressUnitConversion = \"true\")",
                             unit_text(from, c.start_element), unit_text(to, c.end_element)));
}

}  // namespace

void check_against_fmus(SystemModel& system) {
  for (Component& c : system.components) check_component(c);
  for (const Connection& c : system.connections) check_connection(system, c);
}

}  // namespace macrostep::ssp::detail
