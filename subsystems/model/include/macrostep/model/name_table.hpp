// One name table per concept: the names a user writes for the values of an enum (in the
// configuration, on the command line, in the run metadata and in messages), defined once next
// to the enum. The helpers here read such a table; a concept exposes them as
// parse_<concept>(name), to_string(value) and <concept>_names().
//
// A table lists each value once, in the order that messages list the names. The names are
// string literals: to_string() may hand out their data() as a NUL-terminated C string.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace macrostep::model {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

// The value named `name`, or nothing if the table has no such name.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> parse_name(const NameTable<Enum, N>& table, std::string_view name) {
  for (const auto& [value, text] : table) {
    if (text == name) return value;
  }
  return std::nullopt;
}

// The name of `value`; "?" for a value the table lacks (a cast from a wrong number).
template <typename Enum, std::size_t N>
constexpr const char* name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [v, text] : table) {
    if (v == value) return text.data();
  }
  return "?";
}

// Every name, in table order.
template <typename Enum, std::size_t N>
std::vector<std::string_view> names_of(const NameTable<Enum, N>& table) {
  std::vector<std::string_view> names;
  names.reserve(N);
  for (const auto& entry : table) names.push_back(entry.second);
  return names;
}

// "a, b, c": the names of a message's "allowed: ..." list.
inline std::string joined_names(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace macrostep::model
