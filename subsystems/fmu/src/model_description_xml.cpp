// modelDescription.xml (model_description_xml.hpp), read with libxml2's tree API.
#include "model_description_xml.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "macrostep/fmu/archive.hpp"

namespace macrostep::fmu {

namespace {

using Document = std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)>;

bool named(const xmlNode* n, const char* name) {
  return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, BAD_CAST name) == 0;
}

std::optional<std::string> attribute(const xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, BAD_CAST name);
  if (v == nullptr) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

std::string where(const xmlNode* n) {
  return "<" + std::string(reinterpret_cast<const char*>(n->name)) + "> (line " +
         std::to_string(xmlGetLineNo(n)) + ")";
}

[[noreturn]] void fail(const xmlNode* n, const std::string& why) {
  throw std::invalid_argument("modelDescription.xml: " + where(n) + ": " + why);
}

std::string required(const xmlNode* n, const char* name) {
  auto v = attribute(n, name);
  if (!v) fail(n, std::string("no attribute ") + name);
  return *v;
}

unsigned long number(const xmlNode* n, const char* name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || text.front() == '-') {
    fail(n, std::string(name) + " = \"" + text + "\" is not a non-negative integer");
  }
  return v;
}

bool boolean(const xmlNode* n, const char* name) {
  const auto v = attribute(n, name);
  return v && (*v == "true" || *v == "1");
}

// A real attribute (`start`, `nominal`), if present; a text that is not a number is an error.
std::optional<double> real_attribute(const xmlNode* n, const char* name) {
  const auto v = attribute(n, name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0') fail(n, std::string(name) + " = \"" + *v + "\" is not a number");
  return d;
}

// A start value as a number (a Boolean's true 1, false 0).
std::optional<double> real_start(const xmlNode* n) {
  const auto v = attribute(n, "start");
  if (v == "true") return 1.0;
  if (v == "false") return 0.0;
  return real_attribute(n, "start");
}

VariableType type_of(const char* element) {
  const std::string e(element);
  if (e == "Real" || e == "Float64") return VariableType::kReal;
  if (e == "Integer" || e == "Int32" || e == "Enumeration") return VariableType::kInteger;
  if (e == "Boolean") return VariableType::kBoolean;
  return VariableType::kOther;
}

// An exponent of <BaseUnit> (xs:int, default 0).
int exponent(const xmlNode* n, const char* name) {
  const auto v = attribute(n, name);
  if (!v) return 0;
  char* end = nullptr;
  errno = 0;
  const long e = std::strtol(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno != 0 || e < INT32_MIN || e > INT32_MAX) {
    fail(n, std::string(name) + " = \"" + *v + "\" is not an integer");
  }
  return static_cast<int>(e);
}

// <UnitDefinitions><Unit name><BaseUnit kg m s A K mol cd rad factor offset/>: a unit without a
// <BaseUnit>, or with one that is malformed, is left out (a run needs no units; an importer that
// converts finds the unit undefined and says so).
std::vector<UnitFacts> read_units(const xmlNode* definitions) {
  std::vector<UnitFacts> units;
  for (const xmlNode* u = definitions->children; u; u = u->next) {
    if (!named(u, "Unit")) continue;
    for (const xmlNode* b = u->children; b; b = b->next) {
      if (!named(b, "BaseUnit")) continue;
      try {
        UnitFacts f;
        f.name = required(u, "name");
        for (std::size_t k = 0; k < f.exponents.size(); ++k) {
          f.exponents[k] = exponent(b, kBaseUnitNames[k]);
        }
        f.factor = real_attribute(b, "factor").value_or(1.0);
        f.offset = real_attribute(b, "offset").value_or(0.0);
        if (std::isfinite(f.factor) && f.factor != 0.0 && std::isfinite(f.offset)) {
          units.push_back(std::move(f));
        }
      } catch (const std::invalid_argument&) {
        // left out
      }
    }
  }
  return units;
}

// Raw "derivative" attributes: FMI 2 a 1-based variable index, FMI 3 a value reference.
using RawDerivatives = std::vector<std::pair<std::size_t, unsigned long>>;

// Declared types' units and nominals (FMI 2 <TypeDefinitions><SimpleType name><Real unit
// nominal>, FMI 3 <TypeDefinitions><Float64Type name unit nominal>).
struct TypeAttributes {
  std::optional<std::string> unit;
  std::optional<double> nominal;
};
using DeclaredTypes = std::map<std::string, TypeAttributes>;

void read_type_attributes(const xmlNode* n, TypeAttributes& a) {
  if (auto unit = attribute(n, "unit")) a.unit = *unit;
  if (auto nominal = real_attribute(n, "nominal")) a.nominal = *nominal;
}

DeclaredTypes read_declared_types(const xmlNode* definitions) {
  DeclaredTypes types;
  for (const xmlNode* t = definitions->children; t; t = t->next) {
    if (t->type != XML_ELEMENT_NODE) continue;
    const auto name = attribute(t, "name");
    if (!name) continue;
    TypeAttributes& a = types[*name];
    read_type_attributes(t, a);                             // FMI 3
    for (const xmlNode* r = t->children; r; r = r->next) {  // FMI 2
      if (r->type == XML_ELEMENT_NODE) read_type_attributes(r, a);
    }
  }
  return types;
}

// The attributes of `n` where it has them, else those of its declared type.
TypeAttributes attributes_of(const xmlNode* n, const DeclaredTypes& types) {
  TypeAttributes own;
  read_type_attributes(n, own);
  if (auto declared = attribute(n, "declaredType")) {
    if (const auto it = types.find(*declared); it != types.end()) {
      if (!own.unit) own.unit = it->second.unit;
      if (!own.nominal) own.nominal = it->second.nominal;
    }
  }
  return own;
}

void set_unit_and_nominal(const xmlNode* n, const DeclaredTypes& types, ModelVariable& var) {
  const TypeAttributes a = attributes_of(n, types);
  var.unit = a.unit.value_or("");
  var.nominal = a.nominal;
}

void read_variables_2(const xmlNode* list, ModelXml& m, RawDerivatives& raw,
                      const DeclaredTypes& types) {
  for (const xmlNode* v = list->children; v; v = v->next) {
    if (!named(v, "ScalarVariable")) continue;
    ModelVariable var;
    var.name = required(v, "name");
    var.value_reference =
        static_cast<unsigned>(number(v, "valueReference", required(v, "valueReference")));
    var.causality = attribute(v, "causality").value_or("local");
    var.variability = attribute(v, "variability").value_or("continuous");
    var.description = attribute(v, "description").value_or("");
    for (const xmlNode* t = v->children; t; t = t->next) {
      if (t->type != XML_ELEMENT_NODE) continue;
      var.type = type_of(reinterpret_cast<const char*>(t->name));
      if (var.type != VariableType::kOther) var.start = real_start(t);
      set_unit_and_nominal(t, types, var);
      if (auto d = attribute(t, "derivative"))
        raw.emplace_back(m.variables.size(), number(t, "derivative", *d));
    }
    m.variables.push_back(std::move(var));
  }
}

// A <Dimension valueReference="..."/> of variables[variable]'s dimension `dimension`, resolved
// once every variable is read (resolve_dimensions).
struct RawDimension {
  const xmlNode* node = nullptr;
  std::size_t variable = 0;
  std::size_t dimension = 0;
  unsigned long reference = 0;
};

void read_variables_3(const xmlNode* list, ModelXml& m, RawDerivatives& raw,
                      std::vector<RawDimension>& raw_dimensions, const DeclaredTypes& types) {
  for (const xmlNode* v = list->children; v; v = v->next) {
    if (v->type != XML_ELEMENT_NODE) continue;
    ModelVariable var;
    var.name = required(v, "name");
    var.value_reference =
        static_cast<unsigned>(number(v, "valueReference", required(v, "valueReference")));
    var.causality = attribute(v, "causality").value_or("local");
    var.variability = attribute(v, "variability").value_or("continuous");
    var.type = type_of(reinterpret_cast<const char*>(v->name));
    if (named(v, "Enumeration")) var.type = VariableType::kOther;  // Int64 in FMI 3
    set_unit_and_nominal(v, types, var);
    var.description = attribute(v, "description").value_or("");
    if (named(v, "Clock")) m.clocks.push_back(var.name);
    var.start_text = attribute(v, "start").value_or("");
    // Child elements: <Dimension> makes an array, <Alias> another name.
    for (const xmlNode* c = v->children; c; c = c->next) {
      if (named(c, "Dimension")) {
        if (const auto start = attribute(c, "start")) {
          var.dimensions.push_back(number(c, "start", *start));
        } else {
          raw_dimensions.push_back({c, m.variables.size(), var.dimensions.size(),
                                    number(c, "valueReference", required(c, "valueReference"))});
          var.dimensions.push_back(0);
        }
      } else if (named(c, "Alias")) {
        var.aliases.push_back(required(c, "name"));
      }
    }
    // An array's start attribute lists its elements (read once its size is known).
    if (var.type != VariableType::kOther && var.dimensions.empty()) var.start = real_start(v);
    if (auto d = attribute(v, "derivative"))
      raw.emplace_back(m.variables.size(), number(v, "derivative", *d));
    m.variables.push_back(std::move(var));
  }
}

// FMI 2 refers to variables by 1-based index, FMI 3 by value reference.
std::size_t resolve(const ModelXml& m, const xmlNode* n, unsigned long ref,
                    const std::map<unsigned, std::size_t>& by_reference) {
  if (m.fmi_major == 2) {
    if (ref < 1 || ref > m.variables.size()) {
      fail(n, "refers to variable " + std::to_string(ref) + ", there are " +
                  std::to_string(m.variables.size()));
    }
    return ref - 1;
  }
  const auto it = by_reference.find(static_cast<unsigned>(ref));
  if (it == by_reference.end())
    fail(n, "refers to no variable with valueReference " + std::to_string(ref));
  return it->second;
}

// The sizes that structural parameters give, then the arrays' start values.
void resolve_dimensions(ModelXml& m, const std::vector<RawDimension>& raw_dimensions,
                        const std::map<unsigned, std::size_t>& by_reference) {
  for (const RawDimension& d : raw_dimensions) {
    const ModelVariable& size = m.variables[resolve(m, d.node, d.reference, by_reference)];
    if (size.start_text.empty()) {
      fail(d.node, "its size, the variable \"" + size.name + "\", has no start value");
    }
    m.variables[d.variable].dimensions[d.dimension] =
        number(d.node, ("the start value of \"" + size.name + "\"").c_str(), size.start_text);
  }
  for (ModelVariable& v : m.variables) {
    if (v.dimensions.empty() || v.start_text.empty() || v.type == VariableType::kOther) continue;
    std::istringstream in(v.start_text);
    for (std::string word; in >> word;) {
      if (word == "true" || word == "false") {
        v.starts.push_back(word == "true" ? 1.0 : 0.0);
        continue;
      }
      char* end = nullptr;
      v.starts.push_back(std::strtod(word.c_str(), &end));
      if (*end != '\0') {
        throw std::invalid_argument("modelDescription.xml: the start value \"" + word + "\" of \"" +
                                    v.name + "\" is not a number");
      }
    }
    if (v.starts.size() != v.size()) {
      throw std::invalid_argument("modelDescription.xml: \"" + v.name + "\" has " +
                                  std::to_string(v.size()) + " elements and " +
                                  std::to_string(v.starts.size()) + " start values");
    }
  }
}

Unknown read_unknown(const ModelXml& m, const xmlNode* n,
                     const std::map<unsigned, std::size_t>& by_reference) {
  Unknown u;
  const char* key = m.fmi_major == 2 ? "index" : "valueReference";
  u.variable = resolve(m, n, number(n, key, required(n, key)), by_reference);
  if (const auto deps = attribute(n, "dependencies")) {
    u.dependencies.emplace();
    std::istringstream in(*deps);
    for (std::string word; in >> word;) {
      u.dependencies->push_back(resolve(m, n, number(n, "dependencies", word), by_reference));
    }
  }
  return u;
}

void read_structure(const xmlNode* structure, ModelXml& m,
                    const std::map<unsigned, std::size_t>& by_reference) {
  const auto read_list = [&](const xmlNode* list, const char* entry, std::vector<Unknown>& out) {
    for (const xmlNode* u = list->children; u; u = u->next) {
      if (named(u, entry)) out.push_back(read_unknown(m, u, by_reference));
    }
  };
  for (const xmlNode* c = structure->children; c; c = c->next) {
    if (m.fmi_major == 2) {
      if (named(c, "Outputs")) read_list(c, "Unknown", m.outputs);
      if (named(c, "Derivatives")) read_list(c, "Unknown", m.derivatives);
    } else {
      if (named(c, "Output")) m.outputs.push_back(read_unknown(m, c, by_reference));
      if (named(c, "ContinuousStateDerivative"))
        m.derivatives.push_back(read_unknown(m, c, by_reference));
      if (named(c, "EventIndicator")) ++m.event_indicators;
    }
  }
}

void read_interfaces(const xmlNode* root, ModelXml& m) {
  for (const xmlNode* c = root->children; c; c = c->next) {
    const bool two = m.fmi_major == 2;
    if (named(c, "CoSimulation")) {
      m.co_simulation = true;
      m.cs.model_identifier = required(c, "modelIdentifier");
      m.cs.can_serialize_state =
          boolean(c, two ? "canGetAndSetFMUstate" : "canGetAndSetFMUState") &&
          boolean(c, two ? "canSerializeFMUstate" : "canSerializeFMUState");
      m.cs.can_interpolate_inputs = two && boolean(c, "canInterpolateInputs");
      m.cs.variable_step = boolean(c, "canHandleVariableCommunicationStepSize");
      m.cs.only_once_per_process = boolean(c, "canBeInstantiatedOnlyOncePerProcess");
    }
    if (named(c, "ScheduledExecution")) m.scheduled_execution = true;
    if (!named(c, "ModelExchange")) continue;
    m.model_exchange = true;
    m.model_identifier = required(c, "modelIdentifier");
    m.only_once_per_process = boolean(c, "canBeInstantiatedOnlyOncePerProcess");
    m.directional_derivatives = boolean(
        c, m.fmi_major == 2 ? "providesDirectionalDerivative" : "providesDirectionalDerivatives");
    m.needs_execution_tool = boolean(c, "needsExecutionTool");
    m.can_serialize_state = boolean(c, two ? "canGetAndSetFMUstate" : "canGetAndSetFMUState") &&
                            boolean(c, two ? "canSerializeFMUstate" : "canSerializeFMUState");
    m.needs_completed_integrator_step = two ? !boolean(c, "completedIntegratorStepNotNeeded")
                                            : boolean(c, "needsCompletedIntegratorStep");
  }
}

}  // namespace

std::size_t ModelVariable::size() const {
  std::size_t n = 1;
  for (std::size_t d : dimensions) n *= d;
  return n;
}

std::string ModelVariable::element_name(std::size_t k) const {
  if (dimensions.empty()) return name;
  std::vector<std::size_t> index(dimensions.size());
  for (std::size_t d = dimensions.size(); d-- > 0;) {
    index[d] = k % dimensions[d] + 1;
    k /= dimensions[d];
  }
  std::string out = name;
  for (std::size_t d = 0; d < index.size(); ++d) {
    out.push_back(d == 0 ? '[' : ',');
    out.append(std::to_string(index[d]));
  }
  out.push_back(']');
  return out;
}

std::optional<double> ModelVariable::element_start(std::size_t k) const {
  if (dimensions.empty()) return start;
  if (k < starts.size()) return starts[k];
  return std::nullopt;
}

std::optional<std::size_t> ModelXml::find_reference(unsigned ref) const {
  for (std::size_t i = 0; i < variables.size(); ++i) {
    if (variables[i].value_reference == ref) return i;
  }
  return std::nullopt;
}

std::optional<ElementRef> ModelXml::find_element(std::string_view name) const {
  if (const auto v = find(name)) {
    if (variables[*v].dimensions.empty()) return ElementRef{*v, 0};
    return std::nullopt;  // a whole array is not one element
  }
  const auto open = name.find('[');
  if (open == std::string_view::npos || name.back() != ']') return std::nullopt;
  const auto v = find(name.substr(0, open));
  if (!v || variables[*v].dimensions.empty()) return std::nullopt;
  const auto& dims = variables[*v].dimensions;
  std::istringstream in(std::string(name.substr(open + 1, name.size() - open - 2)));
  std::size_t flat = 0, d = 0;
  for (std::string word; std::getline(in, word, ','); ++d) {
    char* end = nullptr;
    const long i = std::strtol(word.c_str(), &end, 10);
    if (word.empty() || *end != '\0' || d >= dims.size() || i < 1 ||
        static_cast<std::size_t>(i) > dims[d]) {
      return std::nullopt;
    }
    flat = flat * dims[d] + static_cast<std::size_t>(i - 1);
  }
  if (d != dims.size()) return std::nullopt;
  return ElementRef{*v, flat};
}

std::optional<std::size_t> ModelXml::find(std::string_view name) const {
  for (std::size_t i = 0; i < variables.size(); ++i) {
    if (variables[i].name == name) return i;
  }
  for (std::size_t i = 0; i < variables.size(); ++i) {
    const auto& a = variables[i].aliases;
    if (std::find(a.begin(), a.end(), name) != a.end()) return i;
  }
  return std::nullopt;
}

ModelXml parse_model_description(std::string_view xml) {
  Document doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "modelDescription.xml",
                             nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
               &xmlFreeDoc);
  if (!doc) {
    const xmlError* e = xmlGetLastError();
    std::string why = e && e->message ? e->message : "cannot be parsed";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    throw std::invalid_argument("modelDescription.xml is not well-formed XML (line " +
                                std::to_string(e ? e->line : 0) + ": " + why + ")");
  }
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr || !named(root, "fmiModelDescription")) {
    throw std::invalid_argument(
        "modelDescription.xml: the root element is not <fmiModelDescription>");
  }
  ModelXml m;
  const std::string version = required(root, "fmiVersion");
  if (version.rfind("2.", 0) == 0) {
    m.fmi_major = 2;
  } else if (version.rfind("3.", 0) == 0) {
    m.fmi_major = 3;
  } else {
    throw std::invalid_argument("unsupported FMI version \"" + version +
                                "\" (macrostep imports FMI 2.0 and 3.0 Model Exchange FMUs)");
  }
  m.model_name = attribute(root, "modelName").value_or("");
  m.token = required(root, m.fmi_major == 2 ? "guid" : "instantiationToken");
  if (m.fmi_major == 2) {
    m.event_indicators = number(root, "numberOfEventIndicators",
                                attribute(root, "numberOfEventIndicators").value_or("0"));
  }
  read_interfaces(root, m);
  RawDerivatives raw;
  std::vector<RawDimension> raw_dimensions;
  const xmlNode* structure = nullptr;
  DeclaredTypes types;
  for (const xmlNode* c = root->children; c; c = c->next) {
    if (named(c, "TypeDefinitions")) types = read_declared_types(c);
    if (named(c, "UnitDefinitions")) m.units = read_units(c);
  }
  for (const xmlNode* c = root->children; c; c = c->next) {
    if (named(c, "ModelVariables")) {
      if (m.fmi_major == 2) {
        read_variables_2(c, m, raw, types);
      } else {
        read_variables_3(c, m, raw, raw_dimensions, types);
      }
    }
    if (named(c, "ModelStructure")) structure = c;
  }
  std::map<unsigned, std::size_t> by_reference;
  for (std::size_t i = 0; i < m.variables.size(); ++i) {
    by_reference.emplace(m.variables[i].value_reference, i);
  }
  resolve_dimensions(m, raw_dimensions, by_reference);
  for (const auto& [variable, ref] : raw) {
    m.variables[variable].derivative_of = resolve(m, root, ref, by_reference);
  }
  if (structure != nullptr) read_structure(structure, m, by_reference);
  return m;
}

FmuFacts describe_fmu(const std::string& path, const std::vector<std::string>& names) {
  const ArchiveListing listing = list_fmu_archive(path, ArchiveLimits::from_environment());
  if (!listing.model_description) {
    throw std::invalid_argument("the archive has no modelDescription.xml");
  }
  ModelXml xml = parse_model_description(*listing.model_description);
  FmuFacts out;
  for (const std::string& name : names) {
    const auto element = xml.find_element(name);
    const auto whole = xml.find(name);
    if (!element && !whole) {
      out.variables.emplace_back();
      continue;
    }
    const ModelVariable& v = xml.variables[element ? element->variable : *whole];
    out.variables.push_back(
        VariableFacts{v.type, v.causality, v.unit, v.start.has_value() || !v.starts.empty()});
  }
  out.units = std::move(xml.units);
  return out;
}

std::string start_value_problem(VariableType type, double value) {
  if (type == VariableType::kInteger &&
      (value != std::trunc(value) || value < -2147483648.0 || value > 2147483647.0)) {
    return "an Integer variable takes a whole number of 32 bits (values are not rounded)";
  }
  if (type == VariableType::kBoolean && value != 0.0 && value != 1.0) {
    return "a Boolean variable takes true, false, 1 or 0";
  }
  return "";
}

}  // namespace macrostep::fmu
