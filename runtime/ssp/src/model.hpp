// An SSP's system as read (private to macrostep_ssp): the SSD and SSV readers fill it, the TOML
// writer writes it. Values are kept as TOML literals, names as the SSD writes them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/ssp/ssp.hpp"
#include "units.hpp"
#include "xml.hpp"

namespace macrostep::ssp::detail {

// A parameter value: a TOML literal (a float for ssv:Real, an integer, true / false), the unit
// the set gives it (may be empty), the units its set defines, and where.
struct ParameterValue {
  std::string literal;
  std::string unit;
  std::shared_ptr<const UnitTable> set_units;  // of its ssv:ParameterSet (never null once read)
  Origin origin;
  std::string converted_from;  // "2000.0 mm" when check_against_fmus converted it, else empty
};
// By name; a later binding's value replaces an earlier one.
using ParameterValues = std::map<std::string, ParameterValue>;

struct Connector {
  std::string name;
  std::string kind;  // "input", "output", "parameter" or "calculatedParameter"
  std::string type;  // "Real", "Integer", "Boolean", "String", "Enumeration", "Binary"; "": none
  std::string unit;  // of its ssc:Real, may be empty
  Origin origin;
  std::string variable_unit;  // of the FMU variable it names (check_against_fmus), may be empty

  // The connector's unit, else its variable's (SSP 1.0 §4.5.1.1); may be empty.
  const std::string& effective_unit() const { return unit.empty() ? variable_unit : unit; }
};

struct Component {
  std::string name;
  std::string fmu;        // the .fmu as the TOML names it (relative to the translation's base)
  std::string fmu_disk;   // where it is
  std::string interface;  // the FMU subsystem's `interface`; empty: the FMU's default
  std::vector<Connector> connectors;
  ParameterValues parameters;  // FMU variable name -> start value
  UnitTable fmu_units;         // its FMU's UnitDefinitions (check_against_fmus)
  Origin origin;

  const Connector* connector(std::string_view name) const;
  Connector* connector(std::string_view name);
};

// From a component's output to a component's input (the SSD's start and end swapped where it
// draws the connection from the input).
struct Connection {
  std::string start_element, start_connector, end_element, end_connector;
  // Of ssc:LinearTransformation, as TOML floats; check_against_fmus folds the unit conversions
  // into them (the signal law's u = gain·y + offset).
  std::optional<std::string> gain, offset;
  bool suppress_unit_conversion = false;
  std::string conversion_note;  // how units were converted (a TOML comment), else empty
  Origin origin;
};

struct SystemModel {
  std::string description;  // of the ssd:SystemStructureDescription, may be empty
  Origin root;              // the ssd:SystemStructureDescription
  std::vector<Component> components;
  std::vector<Connection> connections;
  std::optional<std::string> end_time, output_interval;  // TOML floats
  Origin experiment;                                     // the ssd:DefaultExperiment
  UnitTable units;                                       // of ssd:Units
};

// How the files an SSD refers to are found: relative URIs against the SSD's directory, which is
// the package's root for an .ssp (whose files must stay inside it).
struct Files {
  std::string label_root;  // the directory as messages name it ("sys.ssp" or the .ssd's folder)
  std::string disk_root;   // the directory on disk (the unpacked root, or the .ssd's folder)
  bool package = false;
  std::vector<std::string> members;  // a package's members (for the hint on a missing file)
};

// A file an SSD refers to.
struct ResolvedFile {
  std::string relative;  // as the TOML names it (relative to disk_root, or absolute for .ssd)
  std::string disk;      // where it is
  std::string label;     // as messages name it
};

// Resolves `uri` (attribute `what` of element `n` of `file`): percent-decoded, relative (an
// absolute path only for a plain .ssd), inside a package, an existing regular file. Refuses
// otherwise, naming the element.
ResolvedFile resolve(const Files& files, const std::string& file, const xmlNode* n,
                     const std::string& uri, const char* what);

// A number of an attribute (xs:double: surrounding blanks, INF and NaN refused as not finite) as a
// TOML float literal; refused at `n` if it is not one.
std::string float_literal(const std::string& file, const xmlNode* n, const char* attribute,
                          const std::string& text);
double float_value(const std::string& file, const xmlNode* n, const char* attribute,
                   const std::string& text);
// `v` as a TOML float literal (the shortest text that reads back as v).
std::string float_literal(double v);

// The ssv:ParameterSet element `set` of `file` into `out`, each name after `prefix`. Refuses
// what it does not support (ssv:String, ssv:Enumeration, ssv:Binary values; unknown elements), a
// parameter given twice in the set, and a value that is not a number or boolean.
void read_parameter_set(const std::string& file, const xmlNode* set, const std::string& prefix,
                        ParameterValues& out);

// The SSD of `document` (its files found through `files`).
SystemModel read_ssd(const XmlDocument& document, const Files& files);

// Checks `system` against its FMUs' model descriptions, filling Connector::variable_unit and
// Component::fmu_units, and converts units (units.hpp): parameter values into their variable's
// unit, connections' values from the output's unit to the input's (into gain and offset).
// Refuses units that cannot be converted, values of a type the variable cannot take, and names
// of no variable. An FMU that cannot be read is left to the FMU subsystem's refusal.
void check_against_fmus(SystemModel& system);

// The TOML text of `system` and each line's origin (Translation::toml, origins).
void write_toml(const SystemModel& system, const std::string& source, Translation& out);

}  // namespace macrostep::ssp::detail
