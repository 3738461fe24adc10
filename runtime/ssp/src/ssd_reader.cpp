// The System Structure Description (SSP 1.0) as a SystemModel (model.hpp): one flat system of
// FMU components, their connectors, parameter bindings and connections, and the default
// experiment. Every element that would change the system's meaning and is not read is refused
// at its line; ignored() elements are skipped.
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model.hpp"

namespace macrostep::ssp::detail {

const Connector* Component::connector(std::string_view wanted) const {
  for (const Connector& c : connectors) {
    if (c.name == wanted) return &c;
  }
  return nullptr;
}

Connector* Component::connector(std::string_view wanted) {
  return const_cast<Connector*>(std::as_const(*this).connector(wanted));
}

namespace {

constexpr const char* kFmuType = "application/x-fmu-sharedlibrary";
constexpr const char* kParameterSetType = "application/x-ssp-parameter-set";

struct Reader {
  const std::string& file;
  const Files& files;
  SystemModel model;
  ParameterValues system_parameters;  // of the system's bindings: "<component>.<name>"
};

[[noreturn]] void unsupported(const Reader& r, const xmlNode* n, const std::string& where) {
  refuse(r.file, n,
         fmt::format("is not supported {} (docs/reference/configuration.md, \"SSP "
                     "packages\", lists what macrostep reads)",
                     where));
}

// ssd:Connectors of a component.
void read_connectors(const Reader& r, const xmlNode* list, Component& c) {
  for (const xmlNode* n : elements(list)) {
    if (ignored(n)) continue;
    if (!is(n, kSsdNamespace, "Connector")) unsupported(r, n, "in ssd:Connectors");
    Connector k;
    k.name = required(r.file, n, "name");
    k.kind = required(r.file, n, "kind");
    k.origin = origin_of(r.file, n);
    // A calculated parameter is read so that a connection to it is refused with the reason.
    if (k.kind != "input" && k.kind != "output" && k.kind != "parameter" &&
        k.kind != "calculatedParameter") {
      refuse(r.file, n,
             fmt::format("kind = \"{}\" is not supported: connectors of a component are input, "
                         "output, parameter or calculatedParameter",
                         k.kind));
    }
    // Any type is read: only a connection needs ssc:Real (read_connection).
    for (const xmlNode* t : elements(n)) {
      if (ignored(t)) continue;
      static constexpr const char* kTypes[] = {"Real",   "Integer",     "Boolean",
                                               "String", "Enumeration", "Binary"};
      for (const char* type : kTypes) {
        if (is(t, kSscNamespace, type)) k.type = type;
      }
      if (k.type.empty()) unsupported(r, t, "in an ssd:Connector (ssc:Real, ssc:Integer, ...)");
      if (k.type == "Real") k.unit = attribute(t, "unit").value_or("");
    }
    if (const Connector* first = c.connector(k.name)) {
      refuse(r.file, n, fmt::format("is declared twice (first at line {})", first->origin.line));
    }
    c.connectors.push_back(std::move(k));
  }
}

// One ssd:ParameterBinding into `out`.
void read_binding(const Reader& r, const xmlNode* b, ParameterValues& out) {
  const std::string type = attribute(b, "type").value_or(kParameterSetType);
  if (type != kParameterSetType) {
    refuse(r.file, b,
           fmt::format("type = \"{}\" is not supported: parameter sources are {}", type,
                       kParameterSetType));
  }
  if (attribute(b, "sourceBase").value_or("SSD") != "SSD") {
    refuse(r.file, b,
           "sourceBase = \"component\" is not supported: a parameter source is resolved against "
           "the SSD");
  }
  const std::string prefix = attribute(b, "prefix").value_or("");
  const xmlNode* inline_values = nullptr;
  for (const xmlNode* n : elements(b)) {
    if (ignored(n)) continue;
    if (is(n, kSsdNamespace, "ParameterMapping")) {
      refuse(r.file, n,
             "is not supported: parameter mappings (ssm) are not read; give the set the "
             "variables' names");
    }
    if (!is(n, kSsdNamespace, "ParameterValues")) unsupported(r, n, "in ssd:ParameterBinding");
    inline_values = n;
  }
  const auto source = attribute(b, "source");
  if (source && inline_values != nullptr) {
    refuse(r.file, b, "has both a source and ssd:ParameterValues; give one of them");
  }
  if (source) {
    const ResolvedFile f = resolve(r.files, r.file, b, *source, "source");
    const XmlDocument ssv(read_xml_file(f.disk, f.label), f.label);
    read_parameter_set(ssv.file(), ssv.root(), prefix, out);
    return;
  }
  if (inline_values == nullptr) {
    refuse(r.file, b, "has neither a source nor ssd:ParameterValues");
  }
  const xmlNode* set = nullptr;
  for (const xmlNode* n : elements(inline_values)) {
    if (set != nullptr) refuse(r.file, n, "ssd:ParameterValues holds one ssv:ParameterSet");
    set = n;
  }
  if (set == nullptr) refuse(r.file, inline_values, "holds no ssv:ParameterSet");
  read_parameter_set(r.file, set, prefix, out);
}

void read_bindings(const Reader& r, const xmlNode* list, ParameterValues& out) {
  for (const xmlNode* n : elements(list)) {
    if (ignored(n)) continue;
    if (!is(n, kSsdNamespace, "ParameterBinding")) unsupported(r, n, "in ssd:ParameterBindings");
    read_binding(r, n, out);
  }
}

void read_component(Reader& r, const xmlNode* n) {
  Component c;
  c.name = required(r.file, n, "name");
  c.origin = origin_of(r.file, n);
  const std::string type = attribute(n, "type").value_or(kFmuType);
  if (type != kFmuType) {
    refuse(r.file, n,
           fmt::format("type = \"{}\" is not supported: components are FMUs ({}); nested SSDs "
                       "and SSPs are not read",
                       type, kFmuType));
  }
  // The FMU interface to run: the FMU subsystem's `interface` key ("any": its default choice).
  const std::string implementation = attribute(n, "implementation").value_or("any");
  if (implementation == "ModelExchange") {
    c.interface = "model-exchange";
  } else if (implementation == "CoSimulation") {
    c.interface = "co-simulation";
  } else if (implementation != "any") {
    refuse(r.file, n,
           fmt::format("implementation = \"{}\" is not supported (\"any\", \"ModelExchange\" or "
                       "\"CoSimulation\")",
                       implementation));
  }
  for (const Component& other : r.model.components) {
    if (other.name == c.name) {
      refuse(r.file, n, fmt::format("the name is taken (line {})", other.origin.line));
    }
  }
  const ResolvedFile fmu = resolve(r.files, r.file, n, required(r.file, n, "source"), "source");
  c.fmu = fmu.relative;
  c.fmu_disk = fmu.disk;
  for (const xmlNode* k : elements(n)) {
    if (ignored(k)) continue;
    if (is(k, kSsdNamespace, "Connectors")) {
      read_connectors(r, k, c);
    } else if (is(k, kSsdNamespace, "ParameterBindings")) {
      read_bindings(r, k, c.parameters);
    } else {
      unsupported(r, k, "in an ssd:Component");
    }
  }
  r.model.components.push_back(std::move(c));
}

void read_elements(Reader& r, const xmlNode* list) {
  for (const xmlNode* n : elements(list)) {
    if (ignored(n)) continue;
    if (is(n, kSsdNamespace, "Component")) {
      read_component(r, n);
    } else if (is(n, kSsdNamespace, "System")) {
      refuse(r.file, n,
             "is not supported: a nested system; macrostep reads one flat system of FMU "
             "components");
    } else {
      unsupported(r, n, "in ssd:Elements (only ssd:Component)");
    }
  }
}

// The component and connector at one end of connection `n`.
const Connector& endpoint(const Reader& r, const xmlNode* n, const char* element_key,
                          const char* connector_key, std::string& element, std::string& connector) {
  const auto name = attribute(n, element_key);
  connector = required(r.file, n, connector_key);
  if (!name) {
    refuse(r.file, n,
           fmt::format("connects \"{}\", a connector of the system itself (no {}), which is not "
                       "supported: connect components' connectors",
                       connector, element_key));
  }
  element = *name;
  for (const Component& c : r.model.components) {
    if (c.name != element) continue;
    if (const Connector* k = c.connector(connector)) return *k;
    refuse(r.file, n, fmt::format("component \"{}\" has no connector \"{}\"", element, connector));
  }
  refuse(r.file, n, fmt::format("{} = \"{}\" names no component", element_key, element));
}

void read_transformation(const Reader& r, const xmlNode* t, Connection& c) {
  if (!is(t, kSscNamespace, "LinearTransformation")) {
    refuse(r.file, t,
           "is not supported: connections are direct or ssc:LinearTransformation (factor, "
           "offset)");
  }
  if (const auto f = attribute(t, "factor")) c.gain = float_literal(r.file, t, "factor", *f);
  if (const auto o = attribute(t, "offset")) c.offset = float_literal(r.file, t, "offset", *o);
}

// What a connection may join: connectors that a signal law couples, i.e. Real (or untyped:
// the FMU variable's type decides) and no calculated parameter.
void check_coupled(const Connection& c, const Connector& k, const std::string& element) {
  if (k.kind == "calculatedParameter") {
    throw SspError(
        c.origin,
        fmt::format("connects {}.{}, a calculatedParameter connector: macrostep couples a "
                    "component's output to a component's input at every macro step, and a "
                    "calculated parameter is fixed when the FMU is initialized (leave it "
                    "unconnected: it is then ignored)",
                    element, k.name));
  }
  if (!k.type.empty() && k.type != "Real") {
    throw SspError(
        c.origin,
        fmt::format("connects {}.{}, an ssc:{} connector: an SSP's connections are translated "
                    "for ssc:Real connectors only (an FMU's integer and boolean variables are "
                    "connected in a TOML configuration's [[connection]]; string, enumeration and "
                    "binary ones cannot be); an unconnected connector of any type is left alone",
                    element, k.name, k.type));
  }
}

// An xs:boolean attribute of `n` (absent: false).
bool boolean_attribute(const Reader& r, const xmlNode* n, const char* name) {
  const std::string text = attribute(n, name).value_or("false");
  const auto b = text.find_first_not_of(" \t\r\n");
  const std::string t =
      b == std::string::npos ? "" : text.substr(b, text.find_last_not_of(" \t\r\n") + 1 - b);
  if (t == "true" || t == "1") return true;
  if (t == "false" || t == "0") return false;
  refuse(r.file, n, fmt::format("{} = \"{}\" is not a boolean (true, false, 1 or 0)", name, text));
}

void read_connection(Reader& r, const xmlNode* n) {
  Connection c;
  c.origin = origin_of(r.file, n);
  const Connector* start =
      &endpoint(r, n, "startElement", "startConnector", c.start_element, c.start_connector);
  const Connector* end =
      &endpoint(r, n, "endElement", "endConnector", c.end_element, c.end_connector);
  // Start and end do not say which way the data flows (SSP 1.0 §5.3.2): from the output.
  if (start->kind == "input" && end->kind == "output") {
    std::swap(start, end);
    std::swap(c.start_element, c.end_element);
    std::swap(c.start_connector, c.end_connector);
  }
  c.origin.element = fmt::format("ssd:Connection {}.{} -> {}.{}", c.start_element,
                                 c.start_connector, c.end_element, c.end_connector);
  check_coupled(c, *start, c.start_element);
  check_coupled(c, *end, c.end_element);
  if (start->kind != "output" || end->kind != "input") {
    throw SspError(
        c.origin,
        fmt::format("connects a connector of kind {} to one of kind {}; a connection joins a "
                    "component's output and a component's input",
                    start->kind, end->kind));
  }
  c.suppress_unit_conversion = boolean_attribute(r, n, "suppressUnitConversion");
  for (const Connection& other : r.model.connections) {
    if (other.end_element == c.end_element && other.end_connector == c.end_connector) {
      throw SspError(
          c.origin,
          fmt::format("feeds input {}.{}, which the connection at line {} feeds already; an "
                      "input takes one connection",
                      c.end_element, c.end_connector, other.origin.line));
    }
  }
  for (const xmlNode* t : elements(n)) {
    if (!ignored(t)) read_transformation(r, t, c);
  }
  r.model.connections.push_back(std::move(c));
}

void read_connections(Reader& r, const xmlNode* list) {
  for (const xmlNode* n : elements(list)) {
    if (ignored(n)) continue;
    if (!is(n, kSsdNamespace, "Connection")) unsupported(r, n, "in ssd:Connections");
    read_connection(r, n);
  }
}

void read_system(Reader& r, const xmlNode* system) {
  const xmlNode *bindings = nullptr, *connections = nullptr;
  for (const xmlNode* n : elements(system)) {
    if (ignored(n) || is(n, kSsdNamespace, "Connectors")) continue;  // the system's own: unused
    if (is(n, kSsdNamespace, "Elements")) {
      read_elements(r, n);
    } else if (is(n, kSsdNamespace, "ParameterBindings")) {
      bindings = n;
    } else if (is(n, kSsdNamespace, "Connections")) {
      connections = n;
    } else if (is(n, kSsdNamespace, "SignalDictionaries")) {
      refuse(r.file, n, "is not supported: signal dictionaries (ssb) are not read");
    } else {
      unsupported(r, n, "in an ssd:System");
    }
  }
  // The components first: connections and the system's bindings name them.
  if (connections != nullptr) read_connections(r, connections);
  if (bindings != nullptr) read_bindings(r, bindings, r.system_parameters);
}

void read_experiment(Reader& r, const xmlNode* n) {
  r.model.experiment = origin_of(r.file, n);
  if (const auto start = attribute(n, "startTime")) {
    if (float_value(r.file, n, "startTime", *start) != 0.0) {
      refuse(r.file, n, fmt::format("startTime = \"{}\": macrostep runs start at t = 0", *start));
    }
  }
  const auto stop = attribute(n, "stopTime");
  if (stop) {
    r.model.end_time = float_literal(r.file, n, "stopTime", *stop);
    // A thousand output intervals (the monolithic run's rows; --set simulation.output_interval).
    const std::string thousandth =
        fmt::format("{}", float_value(r.file, n, "stopTime", *stop) / 1000.0);
    r.model.output_interval = float_literal(r.file, n, "stopTime", thousandth);
  }
  for (const xmlNode* k : elements(n)) {
    if (!ignored(k)) unsupported(r, k, "in ssd:DefaultExperiment");
  }
}

// The system's bindings name "<component>.<variable>": given to the component whose name is the
// longest such prefix; they take precedence over the component's own (SSP 1.0,
// ssd:ParameterBinding).
void apply_system_parameters(Reader& r) {
  for (auto& [name, value] : r.system_parameters) {
    Component* target = nullptr;
    for (Component& c : r.model.components) {
      if (name.size() > c.name.size() + 1 && name.compare(0, c.name.size(), c.name) == 0 &&
          name[c.name.size()] == '.' && (!target || c.name.size() > target->name.size())) {
        target = &c;
      }
    }
    if (target == nullptr) {
      throw SspError(value.origin,
                     fmt::format("\"{}\" names no component's variable; a binding of the system "
                                 "names \"<component>.<variable>\" (or give the binding a prefix)",
                                 name));
    }
    target->parameters.insert_or_assign(name.substr(target->name.size() + 1), value);
  }
}

}  // namespace

SystemModel read_ssd(const XmlDocument& document, const Files& files) {
  Reader r{document.file(), files, {}, {}};
  const xmlNode* root = document.root();
  if (!is(root, kSsdNamespace, "SystemStructureDescription")) {
    refuse(r.file, root,
           fmt::format("is not an SSP 1.0 system structure description "
                       "(ssd:SystemStructureDescription of namespace {})",
                       kSsdNamespace));
  }
  r.model.description = attribute(root, "description").value_or("");
  r.model.root = origin_of(r.file, root);
  const xmlNode* system = nullptr;
  for (const xmlNode* n : elements(root)) {
    if (ignored(n)) continue;
    if (is(n, kSsdNamespace, "System")) {
      if (system != nullptr) refuse(r.file, n, "an SSD describes one ssd:System");
      system = n;
      read_system(r, n);
    } else if (is(n, kSsdNamespace, "DefaultExperiment")) {
      read_experiment(r, n);
    } else if (is(n, kSsdNamespace, "Units")) {
      read_units(r.file, n, r.model.units);
    } else {
      unsupported(r, n, "in ssd:SystemStructureDescription");
    }
  }
  if (system == nullptr) refuse(r.file, root, "has no ssd:System");
  if (r.model.components.empty()) refuse(r.file, system, "has no ssd:Component");
  apply_system_parameters(r);
  check_against_fmus(r.model);
  return std::move(r.model);
}

}  // namespace macrostep::ssp::detail
