#include "toml_node.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "macrostep/config/run_config.hpp"

namespace macrostep::config::detail {
namespace {

std::string type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::string:
      return "string";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::array:
      return "array";
    case toml::node_type::table:
      return "table";
    case toml::node_type::none:
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

// The byte offset of 1-based `column` (toml++ counts code points) in `line`.
std::size_t byte_of_column(std::string_view line, std::size_t column) {
  std::size_t i = 0;
  for (std::size_t c = 1; c < column && i < line.size(); ++c) {
    ++i;
    while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

}  // namespace

Document::Document(std::string_view text, std::string file)
    : text_(text),
      file_(std::move(file)),
      directory_(std::filesystem::path(file_).parent_path().string()) {
  // toml++ skips a UTF-8 byte order mark: columns on the first line start after it.
  line_starts_.push_back(text.starts_with("\xEF\xBB\xBF") ? 3 : 0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
  try {
    table_ = toml::parse(text, std::string_view(file_));
  } catch (const toml::parse_error& e) {
    throw ConfigError(file_, e.source().begin.line, "",
                      "syntax error: " + clipped(summarize_syntax_error(e.description()), 200));
  }
}

Node Document::root() const {
  return Node(table_, "", *this);
}

std::optional<std::string_view> Document::text_of(const toml::source_region& region) const {
  const std::size_t line = region.begin.line;
  if (line == 0 || line != region.end.line || region.path == nullptr) return std::nullopt;
  std::string_view text;
  if (*region.path == file_ && line <= line_starts_.size()) {
    text = text_.substr(line_starts_[line - 1]);
  } else {
    const auto source = std::find_if(sources_.begin(), sources_.end(),
                                     [&region](const auto& s) { return s.first == *region.path; });
    if (source == sources_.end() || line != 1) return std::nullopt;
    text = source->second;
  }
  text = text.substr(0, text.find('\n'));
  const std::size_t begin = byte_of_column(text, region.begin.column);
  const std::size_t end = byte_of_column(text, region.end.column);
  if (end <= begin) return std::nullopt;
  return text.substr(begin, end - begin);
}

void Document::add_source(std::string origin, std::string text) {
  sources_.emplace_back(std::move(origin), std::move(text));
}

bool Document::from_file(const toml::node& node) const {
  const auto& path = node.source().path;
  return path != nullptr && *path == file_;
}

std::string Document::render() const {
  std::ostringstream os;
  os << toml::toml_formatter(table_);
  return os.str();
}

Node::Node(const toml::node& node, std::string path, const Document& document)
    : node_(&node), path_(std::move(path)), document_(&document) {}

unsigned Node::line() const {
  // The root table's location is merely the first line of the file; report no line. Nor for a
  // value of a --set.
  if (path_.empty() || !document_->from_file(*node_)) return 0;
  return static_cast<unsigned>(node_->source().begin.line);
}

bool Node::from_set() const {
  return !path_.empty() && !document_->from_file(*node_);
}

void Node::fail(const std::string& problem) const {
  throw ConfigError(file(), line(), path_, problem);
}

void Node::expect_table() const {
  if (!is_table()) fail(fmt::format("must be a table (got {})", describe()));
}

bool Node::has(std::string_view key) const {
  return is_table() && node_->as_table()->contains(key);
}

std::optional<Node> Node::find(std::string_view key) const {
  expect_table();
  const toml::node* child = node_->as_table()->get(key);
  if (child == nullptr) return std::nullopt;
  return Node(*child, path_.empty() ? std::string(key) : path_ + "." + std::string(key),
              *document_);
}

Node Node::require(std::string_view key) const {
  auto child = find(key);
  if (!child) {
    if (path_.empty()) {
      throw ConfigError(file(), 0, std::string(key), "missing required key");
    }
    fail(fmt::format("missing required key '{}'", key));
  }
  return *child;
}

std::vector<std::pair<std::string, Node>> Node::entries() const {
  expect_table();
  std::vector<std::pair<std::string, Node>> out;
  for (const auto& [key, child] : *node_->as_table()) {
    const std::string name(key.str());
    out.emplace_back(name, Node(child, path_.empty() ? name : path_ + "." + name, *document_));
  }
  // toml++ orders a table by key; sort by position so that the first problem in the file is the
  // one reported (the values of --set after the file's).
  const auto position = [this](const std::pair<std::string, Node>& entry) {
    const auto& begin = entry.second.node_->source().begin;
    return std::make_tuple(!document_->from_file(*entry.second.node_), begin.line, begin.column,
                           std::string_view(entry.first));
  };
  std::sort(out.begin(), out.end(),
            [&position](const auto& a, const auto& b) { return position(a) < position(b); });
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
  if (is_integer()) {
    v = static_cast<double>(node_->as_integer()->get());
  } else if (is_float()) {
    v = node_->as_floating_point()->get();
  } else {
    fail(fmt::format("must be a number (got {})", describe()));
  }
  if (!std::isfinite(v)) fail(fmt::format("must be a finite number (got {})", source_text()));
  return v;
}

std::int64_t Node::integer() const {
  if (!is_integer()) fail(fmt::format("must be an integer (got {})", describe()));
  return node_->as_integer()->get();
}

bool Node::boolean() const {
  if (!is_boolean()) fail(fmt::format("must be a boolean, true or false (got {})", describe()));
  return node_->as_boolean()->get();
}

std::string Node::string() const {
  if (!is_string()) fail(fmt::format("must be a string (got {})", describe()));
  return node_->as_string()->get();
}

std::vector<Node> Node::elements() const {
  if (!is_array()) fail(fmt::format("must be an array (got {})", describe()));
  const toml::array& array = *node_->as_array();
  std::vector<Node> out;
  out.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    out.emplace_back(array[i], fmt::format("{}[{}]", path_, i + 1), *document_);
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
  if (const auto text = document_->text_of(node_->source())) return clipped(*text, 80);
  std::ostringstream os;
  node_->visit([&os](const auto& value) { os << value; });
  return clipped(os.str(), 80);
}

std::string Node::describe() const {
  const std::string type = type_name(node_->type());
  if (is_table() || is_array()) return type;
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

std::string summarize_syntax_error(std::string_view description) {
  std::string text(description.substr(0, description.find('\n')));
  constexpr std::string_view kPrefix = "Error while parsing ";
  const auto colon = text.find(": ");
  if (text.starts_with(kPrefix) && colon != std::string::npos) {
    text = fmt::format("{} (while parsing {})", text.substr(colon + 2),
                       text.substr(kPrefix.size(), colon - kPrefix.size()));
  }
  return text;
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
  if (!n.is_array()) {
    n.fail(
        fmt::format("must be an array of tables, written [[{}]] (got {})", n.path(), n.describe()));
  }
  auto items = n.elements();
  for (const auto& item : items) item.expect_table();
  return items;
}

}  // namespace macrostep::config::detail
