// Parameter sets (ssv:ParameterSet of SSP 1.0): the values of a binding (model.hpp).
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "model.hpp"

namespace macrostep::ssp::detail {

namespace {

std::string trimmed(const std::string& text) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t b = 0, e = text.size();
  while (b < e && blank(text[b])) ++b;
  while (e > b && blank(text[e - 1])) --e;
  return text.substr(b, e - b);
}

// ssv:Integer value (xs:int).
std::string integer_literal(const std::string& file, const xmlNode* n, const std::string& text) {
  std::string t = trimmed(text);
  if (!t.empty() && t.front() == '+') t.erase(0, 1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v < INT32_MIN ||
      v > INT32_MAX) {
    refuse(file, n, fmt::format("value = \"{}\" is not an integer (xs:int)", text));
  }
  return std::to_string(v);
}

// ssv:Boolean value (xs:boolean).
std::string boolean_literal(const std::string& file, const xmlNode* n, const std::string& text) {
  const std::string t = trimmed(text);
  if (t == "true" || t == "1") return "true";
  if (t == "false" || t == "0") return "false";
  refuse(file, n, fmt::format("value = \"{}\" is not a boolean (true, false, 1, 0)", text));
}

// The value element of ssv:Parameter `p`.
ParameterValue parameter_value(const std::string& file, const xmlNode* p) {
  const xmlNode* value = nullptr;
  for (const xmlNode* c : elements(p)) {
    if (ignored(c)) continue;
    if (value != nullptr) refuse(file, c, "a parameter has one value");
    value = c;
  }
  if (value == nullptr) refuse(file, p, "has no value (ssv:Real, ssv:Integer or ssv:Boolean)");
  ParameterValue v;
  v.origin = origin_of(file, p);
  const std::string text = required(file, value, "value");
  if (is(value, kSsvNamespace, "Real")) {
    v.literal = float_literal(file, value, "value", text);
    v.unit = attribute(value, "unit").value_or("");
  } else if (is(value, kSsvNamespace, "Integer")) {
    v.literal = integer_literal(file, value, text);
  } else if (is(value, kSsvNamespace, "Boolean")) {
    v.literal = boolean_literal(file, value, text);
  } else {
    refuse(file, value,
           "is not supported: parameter values are ssv:Real, ssv:Integer or ssv:Boolean (FMU "
           "start values macrostep sets are numbers and booleans)");
  }
  return v;
}

}  // namespace

double float_value(const std::string& file, const xmlNode* n, const char* attribute,
                   const std::string& text) {
  std::string t = trimmed(text);
  if (!t.empty() && t.front() == '+') t.erase(0, 1);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) {
    refuse(file, n, fmt::format("{} = \"{}\" is not a number", attribute, text));
  }
  if (!std::isfinite(v)) {
    refuse(file, n, fmt::format("{} = \"{}\" must be finite", attribute, text));
  }
  return v;
}

std::string float_literal(double v) {
  // The shortest text that reads back as the same double, always a TOML float.
  std::string literal = fmt::format("{}", v);
  if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
  return literal;
}

std::string float_literal(const std::string& file, const xmlNode* n, const char* attribute,
                          const std::string& text) {
  return float_literal(float_value(file, n, attribute, text));
}

void read_parameter_set(const std::string& file, const xmlNode* set, const std::string& prefix,
                        ParameterValues& out) {
  if (!is(set, kSsvNamespace, "ParameterSet")) {
    refuse(file, set,
           fmt::format("is not an SSP 1.0 parameter set (ssv:ParameterSet of namespace {})",
                       kSsvNamespace));
  }
  // The set's units first: its values name them.
  auto units = std::make_shared<UnitTable>();
  for (const xmlNode* c : elements(set)) {
    if (is(c, kSsvNamespace, "Units")) read_units(file, c, *units);
  }
  ParameterValues own;
  for (const xmlNode* c : elements(set)) {
    if (ignored(c) || is(c, kSsvNamespace, "Units")) continue;
    if (!is(c, kSsvNamespace, "Parameters")) {
      refuse(file, c, "is not supported in a parameter set (ssv:Parameters, ssv:Units)");
    }
    for (const xmlNode* p : elements(c)) {
      if (ignored(p)) continue;
      if (!is(p, kSsvNamespace, "Parameter")) refuse(file, p, "is not an ssv:Parameter");
      const std::string name = prefix + required(file, p, "name");
      ParameterValue value = parameter_value(file, p);
      value.set_units = units;
      const auto [it, inserted] = own.emplace(name, std::move(value));
      if (!inserted) {
        refuse(file, p,
               fmt::format("is given twice in the set (first at line {})", it->second.origin.line));
      }
    }
  }
  for (auto& [name, value] : own) out.insert_or_assign(name, std::move(value));
}

}  // namespace macrostep::ssp::detail
