// Typed, located access to a parsed TOML document (private to macrostep_config).
//
// A Node is a toml::value plus its key path; every accessor either returns a value of the
// requested type or throws ConfigError naming file, line and path. Nodes refer to the parsed
// document, which must outlive them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <toml.hpp>
#include <vector>

namespace macrostep::config::detail {

class Node {
 public:
  // `file` names the document in messages; the root has an empty path and no line.
  Node(const toml::value& value, std::string path, const std::string& file);

  const toml::value& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  unsigned line() const;

  [[noreturn]] void fail(const std::string& problem) const;

  // Tables. require() fails at this table when the key is missing.
  void expect_table() const;
  bool has(std::string_view key) const;
  std::optional<Node> find(std::string_view key) const;
  Node require(std::string_view key) const;
  // Keys with their nodes, ordered by position in the file.
  std::vector<std::pair<std::string, Node>> entries() const;
  // Fails at the first key (in file order) not in `allowed`; `context` completes the message
  // "unknown key<context>" (e.g. " for a harmonic force").
  void allow_only(const std::vector<std::string_view>& allowed,
                  std::string_view context = {}) const;

  // Scalars and arrays; numbers accept TOML integers and floats and must be finite.
  double number() const;
  std::int64_t integer() const;
  bool boolean() const;
  std::string string() const;
  std::vector<Node> elements() const;
  // A string that must be one of `allowed`.
  std::string choice(const std::vector<std::string_view>& allowed) const;

  // The value as written in the file (for "(got ...)"), or a rendering if it spans lines.
  std::string source_text() const;
  // "<type> <text>", e.g. `string "abc"` or `table`.
  std::string describe() const;

 private:
  const toml::value* value_;
  std::string path_;
  const std::string* file_;
};

// The elements of an array of tables ([[key]] or key = [{...}, ...]); ConfigError for anything
// else or an element that is not a table.
std::vector<Node> table_array(const Node& n);

// The deepest nesting of arrays and inline tables a configuration may have (the schema needs
// three levels; toml11 parses them recursively, so a deep document would exhaust the stack).
inline constexpr std::size_t kMaxNesting = 32;

// Scans TOML `text` before the recursive parser sees it and throws ConfigError naming `file`
// and the line of a NUL byte (UTF-16 or binary files: a configuration is UTF-8 text) or of the
// point where arrays, inline tables and dotted keys nest deeper than kMaxNesting (strings and
// comments skipped). Linear in the text's length; does not validate the syntax otherwise.
void prescan(std::string_view text, const std::string& file);

// `text`, or its first `max_chars` characters and "... (N characters)" if it is longer: what
// messages echo of a key or value from the file.
std::string clipped(std::string_view text, std::size_t max_chars);

// One-line summary of a toml::syntax_error message (which spans several lines).
std::string summarize_syntax_error(const std::string& what);

// A quoted, comma-separated list: "a", "b", "c".
std::string quoted_list(const std::vector<std::string_view>& items);

}  // namespace macrostep::config::detail
