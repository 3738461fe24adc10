// Unit definitions and conversions of an SSP (units.hpp).
#include "units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model.hpp"

namespace macrostep::ssp::detail {

namespace {

using fmu::kBaseUnitNames;

int exponent(const std::string& file, const xmlNode* n, const char* name) {
  const auto text = attribute(n, name);
  if (!text) return 0;
  std::string t = *text;
  const auto b = t.find_first_not_of(" \t\r\n");
  t = b == std::string::npos ? "" : t.substr(b, t.find_last_not_of(" \t\r\n") + 1 - b);
  if (!t.empty() && t.front() == '+') t.erase(0, 1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v < INT32_MIN ||
      v > INT32_MAX) {
    refuse(file, n, fmt::format("{} = \"{}\" is not an integer exponent", name, *text));
  }
  return static_cast<int>(v);
}

UnitDefinition read_unit(const std::string& file, const xmlNode* u) {
  UnitDefinition d;
  d.name = required(file, u, "name");
  d.where = fmt::format("{}:{}", file, origin_of(file, u).line);
  const xmlNode* base = nullptr;
  for (const xmlNode* n : elements(u)) {
    if (ignored(n)) continue;
    if (!is(n, kSscNamespace, "BaseUnit") || base != nullptr) {
      refuse(file, n, "is not supported in an ssc:Unit (one ssc:BaseUnit)");
    }
    base = n;
  }
  if (base == nullptr) refuse(file, u, "has no ssc:BaseUnit");
  for (std::size_t k = 0; k < d.exponents.size(); ++k) {
    d.exponents[k] = exponent(file, base, kBaseUnitNames[k]);
  }
  if (const auto f = attribute(base, "factor")) d.factor = float_value(file, base, "factor", *f);
  if (const auto o = attribute(base, "offset")) d.offset = float_value(file, base, "offset", *o);
  if (d.factor == 0.0) refuse(file, base, "factor = 0: no value could be converted from it");
  return d;
}

// "kg·m·s^-2"; "1" for none.
std::string base_text(const UnitDefinition& d) {
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < d.exponents.size(); ++k) {
    if (d.exponents[k] == 1) parts.emplace_back(kBaseUnitNames[k]);
    if (d.exponents[k] != 0 && d.exponents[k] != 1) {
      parts.push_back(fmt::format("{}^{}", kBaseUnitNames[k], d.exponents[k]));
    }
  }
  return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, "·"));
}

const UnitDefinition& definition(const UnitUse& use, const UnitUse& other) {
  for (const UnitTable* t : use.scopes) {
    if (const auto it = t->find(use.name); it != t->end()) return it->second;
  }
  throw std::invalid_argument(fmt::format(
      "unit \"{}\" is defined nowhere (not in the SSD's ssd:Units, the parameter set's "
      "ssv:Units or the FMU's UnitDefinitions), so it cannot be converted to or from \"{}\"; "
      "define it with an ssc:BaseUnit",
      use.name, other.name));
}

// Whether two definitions of one name give the same map to SI (factors and offsets written
// differently, 0.001 and 1e-3, parse alike; a relative 1e-12 leaves room for rounding).
bool same_unit(const UnitDefinition& a, const UnitDefinition& b) {
  const auto close = [](double x, double y) {
    return std::abs(x - y) <= 1e-12 * std::max(std::abs(x), std::abs(y));
  };
  return a.exponents == b.exponents && close(a.factor, b.factor) && close(a.offset, b.offset);
}

// A name that the files in a use's scope define differently is refused: the nearest definition
// would decide silently which of two files is wrong (an FMU's "mm" with factor 0.01 beside the
// SSD's 0.001).
void check_one_definition(const UnitUse& use) {
  const UnitDefinition* first = nullptr;
  for (const UnitTable* t : use.scopes) {
    const auto it = t->find(use.name);
    if (it == t->end()) continue;
    if (first == nullptr) {
      first = &it->second;
    } else if (!same_unit(*first, it->second)) {
      throw std::invalid_argument(fmt::format(
          "unit \"{}\" is defined differently at {} ({}, factor {}, offset {}) and at {} ({}, "
          "factor {}, offset {}); make the definitions agree",
          use.name, first->where, base_text(*first), first->factor, first->offset, it->second.where,
          base_text(it->second), it->second.factor, it->second.offset));
    }
  }
}

}  // namespace

void read_units(const std::string& file, const xmlNode* units, UnitTable& out) {
  for (const xmlNode* u : elements(units)) {
    if (ignored(u)) continue;
    if (!is(u, kSscNamespace, "Unit")) refuse(file, u, "is not an ssc:Unit");
    UnitDefinition d = read_unit(file, u);
    if (const auto it = out.find(d.name); it != out.end()) {
      refuse(file, u, fmt::format("is defined twice (first at {})", it->second.where));
    }
    out.emplace(d.name, std::move(d));
  }
}

Affine conversion(const UnitUse& from, const UnitUse& to) {
  if (!from.name.empty()) check_one_definition(from);
  if (!to.name.empty()) check_one_definition(to);
  if (from.name.empty() || to.name.empty() || from.name == to.name) return {};
  const UnitDefinition& a = definition(from, to);
  const UnitDefinition& b = definition(to, from);
  if (a.exponents != b.exponents) {
    throw std::invalid_argument(fmt::format(
        "unit \"{}\" ({}, {}) cannot be converted to unit \"{}\" ({}, {}): their base units "
        "differ",
        a.name, base_text(a), a.where, b.name, base_text(b), b.where));
  }
  // SI = fa·x + oa = fb·y + ob.
  return {a.factor / b.factor, (a.offset - b.offset) / b.factor};
}

}  // namespace macrostep::ssp::detail
