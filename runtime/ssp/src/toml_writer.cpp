// A SystemModel as TOML configuration text (model.hpp): one [[subsystem]] (model = "fmu") per
// component, one [[connection]] (law = "signal") per connection, [simulation] from the default
// experiment; each line remembers the SSP element it comes from, for the configuration reader's
// messages.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "model.hpp"

namespace macrostep::ssp::detail {

namespace {

// A TOML basic string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& s : items) q.push_back(quoted(s));
  return fmt::format("[{}]", fmt::join(q, ", "));
}

class Writer {
 public:
  explicit Writer(Translation& out) : out_(out) {}
  void line(const std::string& text, const Origin& origin = {}) {
    out_.toml += text;
    out_.toml += '\n';
    out_.origins.push_back(origin);
  }

 private:
  Translation& out_;
};

// ASCII letters, digits, '_' and '-' (a connection's name is a result column).
std::string plain(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == '-';
    out += keep ? ch : '_';
  }
  return out;
}

// The inputs connections feed are the FMU's inputs, listed even when none is: SSP 1.0 §5.2.1 keeps
// an unconnected input (declared as a connector or not) at its default, its start value.
void write_component(Writer& w, const Component& c, const std::vector<Connection>& connections) {
  w.line("[[subsystem]]", c.origin);
  w.line("name = " + quoted(c.name), c.origin);
  w.line("model = \"fmu\"", c.origin);
  w.line("path = " + quoted(c.fmu), c.origin);
  if (!c.interface.empty()) w.line("interface = " + quoted(c.interface), c.origin);
  std::vector<std::string> inputs, outputs;
  for (const Connector& k : c.connectors) {
    const auto fed = [&](const Connection& n) {
      return n.end_element == c.name && n.end_connector == k.name;
    };
    if (k.kind == "input" && std::any_of(connections.begin(), connections.end(), fed)) {
      inputs.push_back(k.name);
    }
    // Outputs of the types an FMU subsystem reports (the others are left alone: not coupled).
    if (k.kind == "output" &&
        (k.type.empty() || k.type == "Real" || k.type == "Integer" || k.type == "Boolean")) {
      outputs.push_back(k.name);
    }
  }
  w.line("inputs = " + quoted_list(inputs), c.origin);
  // Without output connectors, the FMU's own list: every output.
  if (!outputs.empty()) w.line("outputs = " + quoted_list(outputs), c.origin);
  if (c.parameters.empty()) return;
  w.line("[subsystem.parameters]", c.origin);
  for (const auto& [name, value] : c.parameters) {
    if (!value.converted_from.empty()) {
      w.line("# " + quoted(name) + " converted from " + value.converted_from, value.origin);
    }
    w.line(quoted(name) + " = " + value.literal, value.origin);
  }
}

void write_connection(Writer& w, const Connection& c, const std::string& name) {
  w.line("[[connection]]", c.origin);
  w.line("name = " + quoted(name), c.origin);
  w.line("law = \"signal\"", c.origin);
  w.line("from = " + quoted(c.start_element + "." + c.start_connector), c.origin);
  w.line("to = " + quoted(c.end_element + "." + c.end_connector), c.origin);
  if (!c.conversion_note.empty()) w.line("# " + c.conversion_note, c.origin);
  if (c.gain) w.line("gain = " + *c.gain, c.origin);
  if (c.offset) w.line("offset = " + *c.offset, c.origin);
}

}  // namespace

void write_toml(const SystemModel& system, const std::string& source, Translation& out) {
  Writer w(out);
  w.line("# What macrostep reads from " + source + " (generated: edits belong in the SSP).");
  w.line("# FMU paths are relative to the SSD's directory (a package's root).");
  if (!system.description.empty()) {
    w.line("description = " + quoted(system.description), system.root);
  }
  if (system.end_time) {
    w.line("");
    w.line("[simulation]", system.experiment);
    w.line("end_time = " + *system.end_time, system.experiment);
    w.line("output_interval = " + *system.output_interval, system.experiment);
  }
  // Subsystems and connections share one namespace; a connection is named after the input it
  // feeds ("<component>_<connector>", made plain), with "_2", "_3", ... where that is taken.
  std::set<std::string> taken;
  for (const Component& c : system.components) {
    w.line("");
    write_component(w, c, system.connections);
    taken.insert(c.name);
  }
  for (const Connection& c : system.connections) {
    const std::string base = plain(c.end_element + "_" + c.end_connector);
    std::string name = base;
    for (int k = 2; taken.count(name) != 0; ++k) name = fmt::format("{}_{}", base, k);
    taken.insert(name);
    w.line("");
    write_connection(w, c, name);
  }
}

}  // namespace macrostep::ssp::detail
