// --set KEY=VALUE: the edits of a file's TOML tree (overrides.hpp).
#include "overrides.hpp"

#include "key_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace macrostep::config::detail {
namespace {

constexpr std::string_view kKeyForm =
    "KEY must be a dotted path of bare keys (letters, digits, '_', '-') or keys in double quotes, "
    "an array's element selected by its 1-based index (.N or [N]) or, in an array of tables, its "
    "name: cosim.rtol, subsystem.motor.inertia, model.force[1].omega";

[[noreturn]] void refuse(const std::string& origin, const std::string& problem) {
  throw ConfigError(origin, 0, "", problem);
}

bool bare(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The segments of KEY, `[N]` read as `.N`, a segment in double quotes taken as it stands
// (an FMU's "body.m"); empty if KEY is malformed.
std::vector<std::string> key_segments(std::string_view key) {
  std::vector<std::string> out;
  std::string current;
  bool closed = false;  // just after "[N]" or a quoted segment
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (bare(c)) {
      if (closed) return {};
      current += c;
      continue;
    }
    if (c == '"') {
      const std::size_t close = key.find('"', i + 1);
      if (!current.empty() || closed || close == std::string_view::npos || close == i + 1) {
        return {};
      }
      out.emplace_back(key.substr(i + 1, close - i - 1));
      i = close;
      closed = true;
      continue;
    }
    if (c != '.' && c != '[') return {};
    if (current.empty() && !closed) return {};
    if (!current.empty()) out.push_back(std::move(current));
    current.clear();
    closed = false;
    if (c == '[') {
      const std::size_t close = key.find(']', i);
      if (close == std::string_view::npos || !digits(key.substr(i + 1, close - i - 1))) return {};
      out.emplace_back(key.substr(i + 1, close - i - 1));
      i = close;
      closed = true;
    }
  }
  if (!current.empty()) {
    out.push_back(std::move(current));
  } else if (!closed) {
    return {};  // empty, or a trailing '.'
  }
  return out;
}

// `text` as a TOML basic string: quoted, with escapes.
std::string basic_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + '"';
}

// `text` parsed as the one entry "v" of a table (messages quote it from `text`), or nothing.
std::optional<toml::table> parse_entry(std::string text, const std::string& origin,
                                       Document& document) {
  try {
    toml::table parsed = toml::parse(text, std::string_view(origin));
    if (parsed.size() != 1 || !parsed.contains("v")) return std::nullopt;
    document.add_source(origin, std::move(text));
    return parsed;
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

// VALUE as the entry "v" of a table: a TOML value, else a number as C writes it (".5"), else the
// text as a string.
toml::table value_table(std::string_view value, const std::string& origin, Document& document) {
  if (value.empty()) refuse(origin, "no value after '=' (an empty string is --set 'KEY=\"\"')");
  std::string text = "v = " + std::string(value);
  try {
    prescan(text, origin);  // the parser is recursive: no deep nesting
  } catch (const ConfigError& e) {
    refuse(origin, e.problem());
  }
  if (auto parsed = parse_entry(std::move(text), origin, document)) return std::move(*parsed);
  toml::table table;
  double number = 0.0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, number);
  if (error == std::errc() && stop == end && std::isfinite(number)) {
    table.insert("v", number);
  } else if (auto quoted = parse_entry("v = " + basic_string(value), origin, document)) {
    return std::move(*quoted);
  } else {
    table.insert("v", std::string(value));  // not UTF-8: no text to quote
  }
  return table;
}

// The 0-based element of `array` that `key` selects: a 1-based index, or the name of a table
// element (its key `name`).
std::size_t element_index(const toml::array& array, const std::string& key, const std::string& path,
                          const std::string& origin) {
  if (digits(key)) {
    const std::size_t index = key.size() > 9 ? 0 : std::stoul(key);
    if (index >= 1 && index <= array.size()) return index - 1;
    refuse(origin, fmt::format("{} has {} element{}; an index counts from 1 (got {})", path,
                               array.size(), array.size() == 1 ? "" : "s", clipped(key, 20)));
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const toml::table* element = array.get(i)->as_table();
    if (element == nullptr) continue;
    if (const auto name = element->get_as<std::string>("name")) {
      if (name->get() == key) return i;
      names.push_back(name->get());
    }
  }
  if (names.empty()) {
    refuse(origin, fmt::format("{} is an array of {} elements: select one by its index, 1..{}",
                               path, array.size(), array.size()));
  }
  const std::vector<std::string_view> views(names.begin(), names.end());
  refuse(origin, fmt::format("no element of {} is named \"{}\" (names: {})", path, clipped(key, 80),
                             clipped(quoted_list(views), 200)));
}

// `path` without its array indices ("model.force[2]" -> "model.force").
std::string without_indices(std::string_view path) {
  std::string out;
  for (bool inside = false; char c : path) {
    if (c == '[') inside = true;
    if (!inside) out += c;
    if (c == ']') inside = false;
  }
  return out;
}

// Setting `key` of `table` (at key path `path`) removes the file's alternatives to it
// (AlternativeKeys).
void drop_alternatives(toml::table& table, const std::string& path, std::string_view key) {
  const std::string plain = without_indices(path);
  for (const AlternativeKeys& group : alternative_keys()) {
    if (group.table != plain ||
        std::find(group.keys.begin(), group.keys.end(), key) == group.keys.end()) {
      continue;
    }
    for (std::string_view other : group.keys) {
      if (other != key) table.erase(other);
    }
  }
}

// Puts `value` at `segments` of `root`, adding the tables on its way that are missing; sets
// o.path and o.created.
void set_at(toml::table& root, const std::vector<std::string>& segments, toml::node&& value,
            Override& o, const std::string& origin) {
  toml::node* at = &root;
  std::string& path = o.path;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& key = segments[i];
    const bool last = i + 1 == segments.size();
    if (toml::table* table = at->as_table()) {
      if (last) drop_alternatives(*table, path, key);
      path = path.empty() ? key : path + "." + key;
      if (last) {
        table->insert_or_assign(key, std::move(value));
        return;
      }
      at = table->get(key);
      if (at == nullptr) {
        at = &table->insert(key, toml::table{}).first->second;
        if (o.created.empty()) o.created = path;
      }
    } else if (toml::array* array = at->as_array()) {
      const std::size_t index = element_index(*array, key, path, origin);
      path += fmt::format("[{}]", index + 1);
      if (last) {
        array->replace(array->cbegin() + static_cast<std::ptrdiff_t>(index), std::move(value));
        return;
      }
      at = array->get(index);
    } else {
      refuse(origin,
             fmt::format("{} is a single value, not a table: it has no key '{}'", path, key));
    }
  }
}

bool at_or_under(std::string_view key_path, std::string_view root) {
  if (root.empty() || !key_path.starts_with(root)) return false;
  return key_path.size() == root.size() || key_path[root.size()] == '.' ||
         key_path[root.size()] == '[';
}

}  // namespace

std::string set_origin(const Override& o) {
  return "--set " + clipped(o.argument, 100);
}

std::vector<Override> apply_overrides(Document& document,
                                      const std::vector<std::string>& arguments) {
  std::vector<Override> out;
  for (const auto& argument : arguments) {
    Override o;
    o.argument = argument;
    const std::string origin = set_origin(o);
    // The first '=' outside a quoted key segment.
    std::size_t equals = 0;
    for (bool quoted = false; equals < argument.size(); ++equals) {
      if (argument[equals] == '"') quoted = !quoted;
      if (argument[equals] == '=' && !quoted) break;
    }
    if (equals == argument.size()) equals = argument.find('=');  // an unclosed quote
    if (equals == std::string::npos) refuse(origin, "must be KEY=VALUE (there is no '=')");
    const auto segments = key_segments(std::string_view(argument).substr(0, equals));
    if (segments.empty()) refuse(origin, std::string(kKeyForm));
    if (segments.size() > kMaxNesting) {
      refuse(origin, fmt::format("KEY nests more than {} deep", kMaxNesting));
    }
    toml::table value =
        value_table(std::string_view(argument).substr(equals + 1), origin, document);
    set_at(document.tree(), segments, std::move(*value.get("v")), o, origin);
    out.push_back(std::move(o));
  }
  return out;
}

const Override* covering(const std::vector<Override>& overrides, std::string_view key_path) {
  const Override* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& o : overrides) {
    for (const std::string* root : {&o.path, &o.created}) {
      if (at_or_under(key_path, *root) && root->size() >= best_length) {
        best = &o;
        best_length = root->size();
      }
    }
  }
  return best;
}

}  // namespace macrostep::config::detail

namespace macrostep::config {

std::string origin(const RunConfig& config, unsigned line, std::string_view key_path) {
  if (line > 0) return fmt::format("{}:{}", config.path, line);
  if (const Override* o = detail::covering(config.overrides, key_path)) {
    return detail::set_origin(*o);
  }
  return config.path;
}

ConfigError error_at(const RunConfig& config, unsigned line, const std::string& key_path,
                     const std::string& problem) {
  const Override* o = line == 0 ? detail::covering(config.overrides, key_path) : nullptr;
  if (o == nullptr) return ConfigError(config.path, line, key_path, problem);
  return ConfigError(detail::set_origin(*o), 0, key_path, problem);
}

}  // namespace macrostep::config
