#include "toml_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "macrostep/config/run_config.hpp"

namespace macrostep::config::detail {
namespace {

std::string type_name(toml::value_t t) {
  switch (t) {
    case toml::value_t::boolean:
      return "boolean";
    case toml::value_t::integer:
      return "integer";
    case toml::value_t::floating:
      return "float";
    case toml::value_t::string:
      return "string";
    case toml::value_t::offset_datetime:
    case toml::value_t::local_datetime:
      return "date-time";
    case toml::value_t::local_date:
      return "date";
    case toml::value_t::local_time:
      return "time";
    case toml::value_t::array:
      return "array";
    case toml::value_t::table:
      return "table";
    case toml::value_t::empty:
      break;
  }
  return "nothing";
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Whether an integer as written in TOML (sign, 0x / 0o / 0b prefix, '_' separators) fits.
bool fits_int64(std::string text) {
  std::erase(text, '_');
  if (!text.empty() && text.front() == '+') text.erase(0, 1);
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'o' || text[1] == 'b')) {
    base = text[1] == 'x' ? 16 : text[1] == 'o' ? 8 : 2;
    text.erase(0, 2);
  }
  std::int64_t v = 0;
  return std::from_chars(text.data(), text.data() + text.size(), v, base).ec !=
         std::errc::result_out_of_range;
}

// Whether a float as written in TOML ('_' separators) is within the double range.
bool fits_double(std::string text) {
  std::erase(text, '_');
  if (!text.empty() && text.front() == '+') text.erase(0, 1);
  double v = 0.0;
  return std::from_chars(text.data(), text.data() + text.size(), v).ec !=
         std::errc::result_out_of_range;
}

}  // namespace

Node::Node(const toml::value& value, std::string path, const std::string& file)
    : value_(&value), path_(std::move(path)), file_(&file) {}

unsigned Node::line() const {
  // The root table's "location" is merely the first line of the file; report no line.
  if (path_.empty()) return 0;
  return static_cast<unsigned>(value_->location().line());
}

void Node::fail(const std::string& problem) const {
  throw ConfigError(*file_, line(), path_, problem);
}

void Node::expect_table() const {
  if (!value_->is_table()) fail(fmt::format("must be a table (got {})", describe()));
}

bool Node::has(std::string_view key) const {
  return value_->is_table() && value_->as_table().count(std::string(key)) != 0;
}

std::optional<Node> Node::find(std::string_view key) const {
  expect_table();
  const auto& table = value_->as_table();
  const auto it = table.find(std::string(key));
  if (it == table.end()) return std::nullopt;
  return Node(it->second, path_.empty() ? it->first : path_ + "." + it->first, *file_);
}

Node Node::require(std::string_view key) const {
  auto child = find(key);
  if (!child) {
    if (path_.empty()) {
      throw ConfigError(*file_, 0, std::string(key), "missing required key");
    }
    fail(fmt::format("missing required key '{}'", key));
  }
  return *child;
}

std::vector<std::pair<std::string, Node>> Node::entries() const {
  expect_table();
  std::vector<std::pair<std::string, Node>> out;
  for (const auto& [key, child] : value_->as_table()) {
    out.emplace_back(key, Node(child, path_.empty() ? key : path_ + "." + key, *file_));
  }
  // toml11 v3 keeps tables in an unordered_map; sort by position so that the first problem
  // in the file is the one reported.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto la = a.second.value().location();
    const auto lb = b.second.value().location();
    return std::make_tuple(la.line(), la.column(), a.first) <
           std::make_tuple(lb.line(), lb.column(), b.first);
  });
  return out;
}

void Node::allow_only(const std::vector<std::string_view>& allowed,
                      std::string_view context) const {
  for (const auto& [key, child] : entries()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string suggestion;
    std::size_t best = 3;  // suggest only close matches (typos, not different words)
    for (auto candidate : allowed) {
      const std::size_t d = edit_distance(key, candidate);
      if (d < best && d < std::max<std::size_t>(candidate.size(), 2)) {
        best = d;
        suggestion = fmt::format("; did you mean '{}'?", candidate);
      }
    }
    child.fail(fmt::format("unknown key{}{} (allowed: {})", context, suggestion,
                           fmt::join(allowed, ", ")));
  }
}

double Node::number() const {
  double v = 0.0;
  if (value_->is_integer()) {
    v = static_cast<double>(value_->as_integer());
  } else if (value_->is_floating()) {
    v = value_->as_floating();
    // toml11 saturates a float beyond the double range to the largest double, silently.
    if (std::abs(v) == std::numeric_limits<double>::max() && !fits_double(source_text())) {
      fail(fmt::format("is out of range: beyond the largest double, {} (got {})",
                       std::numeric_limits<double>::max(), source_text()));
    }
  } else {
    fail(fmt::format("must be a number (got {})", describe()));
  }
  if (!std::isfinite(v)) fail(fmt::format("must be a finite number (got {})", source_text()));
  return v;
}

std::int64_t Node::integer() const {
  if (!value_->is_integer()) fail(fmt::format("must be an integer (got {})", describe()));
  const std::int64_t v = value_->as_integer();
  // toml11 saturates an integer that does not fit in 64 bits to the limit, silently.
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if ((v == kMin || v == kMax) && !fits_int64(source_text())) {
    fail(fmt::format("is out of range: a TOML integer has 64 bits, {}..{} (got {})", kMin, kMax,
                     source_text()));
  }
  return v;
}

bool Node::boolean() const {
  if (!value_->is_boolean()) {
    fail(fmt::format("must be a boolean, true or false (got {})", describe()));
  }
  return value_->as_boolean();
}

std::string Node::string() const {
  if (!value_->is_string()) fail(fmt::format("must be a string (got {})", describe()));
  return value_->as_string().str;
}

std::vector<Node> Node::elements() const {
  if (!value_->is_array()) fail(fmt::format("must be an array (got {})", describe()));
  std::vector<Node> out;
  const auto& array = value_->as_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    out.emplace_back(array[i], fmt::format("{}[{}]", path_, i + 1), *file_);
  }
  return out;
}

std::string Node::choice(const std::vector<std::string_view>& allowed) const {
  std::string s = string();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    fail(fmt::format("must be one of {} (got \"{}\")", quoted_list(allowed), clipped(s, 80)));
  }
  return s;
}

std::string Node::source_text() const {
  const auto loc = value_->location();
  const std::string& line = loc.line_str();
  const std::size_t begin = loc.column() - 1;
  if (begin + loc.region() <= line.size() && loc.region() > 0) {
    return clipped(std::string_view(line).substr(begin, loc.region()), 80);
  }
  std::ostringstream os;
  os << toml::format(*value_, 0);
  return clipped(os.str(), 80);
}

std::string Node::describe() const {
  const std::string type = type_name(value_->type());
  if (value_->is_table() || value_->is_array()) return type;
  return type + " " + source_text();
}

std::string clipped(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, max_chars), text.size());
}

namespace {

// The position just after the string that starts at text[i] (a quote character): basic or
// literal, single- or multi-line. An unterminated string ends at the text's end, or at the end
// of the line for a single-line one (the parser reports it); `line` counts the newlines inside.
std::size_t skip_string(std::string_view text, std::size_t i, unsigned& line) {
  const char quote = text[i];
  const bool multi = text.substr(i, 3) == std::string(3, quote);
  const bool escapes = quote == '"';
  for (i += multi ? 3 : 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && escapes) {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++line;
      ++i;
    } else if (c == '\n') {
      if (!multi) return i;
      ++line;
    } else if (c == quote && (!multi || text.substr(i, 3) == std::string(3, quote))) {
      // A multi-line string may end in up to two more quotes ("""a"""" is `a"`).
      std::size_t end = i + (multi ? 3 : 1);
      while (multi && end < text.size() && text[end] == quote && end < i + 5) ++end;
      return end;
    }
  }
  return text.size();
}

}  // namespace

void prescan(std::string_view text, const std::string& file) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto nul_line = 1 + std::count(text.begin(), text.begin() + nul, '\n');
    throw ConfigError(file, static_cast<unsigned>(nul_line), "",
                      "contains a NUL byte: a configuration is UTF-8 text (is this file UTF-16, "
                      "or not text at all?)");
  }
  std::string open;  // the unclosed '[' and '{', innermost last
  std::size_t key_dots = 0;
  bool key = true;  // in a key (dots nest tables) rather than a value
  bool line_start = true;
  unsigned line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = skip_string(text, i, line);
      line_start = false;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\n') {
      ++line;
      key = open.empty();
      key_dots = 0;
      line_start = true;
    } else if (c == '[' || c == '{') {
      key = c == '{' || (line_start && open.empty()) || (key && open == "[");  // [[header]]
      open += c;
      line_start = false;
    } else if (c == ']' || c == '}') {
      if (!open.empty()) open.pop_back();
      key = false;
      key_dots = 0;
    } else if (c == ',') {
      key = !open.empty() && open.back() == '{';
      key_dots = 0;
    } else if (c == '=') {
      key = false;
      key_dots = 0;
    } else if (c == '.' && key) {
      ++key_dots;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      line_start = false;
    }
    if (open.size() + key_dots > kMaxNesting) {
      throw ConfigError(file, line, "",
                        fmt::format("arrays, inline tables and dotted keys nest more than {} "
                                    "deep here; a configuration needs at most a few levels",
                                    kMaxNesting));
    }
    ++i;
  }
}

std::string summarize_syntax_error(const std::string& what) {
  std::istringstream in(what);
  std::string first;
  std::getline(in, first);
  if (first.rfind("[error] ", 0) == 0) first.erase(0, 8);
  // Drop toml11's function name ("toml::parse_key_value_pair: ").
  if (first.rfind("toml::", 0) == 0) {
    const auto colon = first.find(": ");
    if (colon != std::string::npos) first.erase(0, colon + 2);
  }
  // The annotation under the last underlined region, e.g. "^--- should be `=`".
  std::string note;
  for (std::string line; std::getline(in, line);) {
    const auto bar = line.find(" | ");
    if (bar == std::string::npos) continue;
    std::string_view rest(line);
    rest.remove_prefix(bar + 3);
    const auto mark = rest.find_first_not_of(' ');
    if (mark == std::string_view::npos || (rest[mark] != '^' && rest[mark] != '~')) continue;
    rest.remove_prefix(mark);
    const auto text = rest.find_first_not_of("^~- ");
    if (text != std::string_view::npos) note = std::string(rest.substr(text));
  }
  while (!first.empty() && (first.back() == ' ' || first.back() == '.')) first.pop_back();
  if (!note.empty() && first.find(note) == std::string::npos) first += " (" + note + ")";
  return first;
}

std::string quoted_list(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("\"{}\"", items[i]);
  }
  return out;
}

std::vector<Node> table_array(const Node& n) {
  if (!n.value().is_array()) {
    n.fail(
        fmt::format("must be an array of tables, written [[{}]] (got {})", n.path(), n.describe()));
  }
  auto items = n.elements();
  for (const auto& item : items) item.expect_table();
  return items;
}

}  // namespace macrostep::config::detail
