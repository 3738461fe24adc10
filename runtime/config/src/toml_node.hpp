// Typed, located access to a parsed TOML document (private to macrostep_config).
//
// The parser is toml++: its time is linear in the text, also for one long line (a chain's x0
// array of a million numbers), and its nodes carry line and column. A Document owns the parsed tree
// and keeps a view of the text, so that messages can quote a value as written. A Node is a toml++
// node plus its key path; every accessor either returns a value of the requested type or throws
// ConfigError naming file, line and path. Nodes refer to their Document, which must outlive them.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace macrostep::config::detail {

class Node;

class Document {
 public:
  // Parses `text` (which must outlive the Document); `file` names it in messages. Throws
  // ConfigError "syntax error: ..." with the line of the problem.
  Document(std::string_view text, std::string file);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  // The root table: empty path, no line.
  Node root() const;
  const std::string& file() const { return file_; }
  // The directory that relative file paths of the configuration (an FMU, a plugin, a data file)
  // are relative to: the file's own directory unless set (an SSP's unpacked package).
  const std::string& directory() const { return directory_; }
  void set_directory(std::string directory) { directory_ = std::move(directory); }
  // The text of a region that lies on one line (of the file, or of a source added below), or
  // nothing for one that spans lines or has no text.
  std::optional<std::string_view> text_of(const toml::source_region& region) const;

  // The --set edits (overrides.cpp), made before any Node of the tree exists: the tree itself,
  // and the text a value was parsed from under the source name `origin`, so that messages quote
  // it as written.
  toml::table& tree() { return table_; }
  void add_source(std::string origin, std::string text);
  // Whether the node comes from the file (not from a --set): only such nodes have a line.
  bool from_file(const toml::node& node) const;
  // The tree as TOML (toml++'s formatting; comments are not kept).
  std::string render() const;

 private:
  std::string_view text_;
  std::string file_;
  std::string directory_;
  std::vector<std::size_t> line_starts_;  // byte offset of each line's first character
  std::vector<std::pair<std::string, std::string>> sources_;  // origin, text (one line)
  toml::table table_;
};

class Node {
 public:
  Node(const toml::node& node, std::string path, const Document& document);

  const std::string& path() const { return path_; }
  const std::string& file() const { return document_->file(); }
  // Document::directory().
  const std::string& directory() const { return document_->directory(); }
  unsigned line() const;
  // Whether a --set gave the value (not the file).
  bool from_set() const;

  [[noreturn]] void fail(const std::string& problem) const;

  // The type of the value (TOML integers and floats are distinct: is_number() is either).
  bool is_table() const { return node_->is_table(); }
  bool is_array() const { return node_->is_array(); }
  bool is_string() const { return node_->is_string(); }
  bool is_integer() const { return node_->is_integer(); }
  bool is_float() const { return node_->is_floating_point(); }
  bool is_number() const { return node_->is_number(); }
  bool is_boolean() const { return node_->is_boolean(); }

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

  // Scalars and arrays; numbers accept TOML integers and floats and must be finite. (A number
  // beyond the range of a 64-bit integer or of a double is a syntax error of the parser.)
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
  const toml::node* node_;
  std::string path_;
  const Document* document_;
};

// The elements of an array of tables ([[key]] or key = [{...}, ...]); ConfigError for anything
// else or an element that is not a table.
std::vector<Node> table_array(const Node& n);

// The deepest nesting of arrays and inline tables a configuration may have (the schema needs
// three levels; the parser is recursive, so a deep document would exhaust the stack).
inline constexpr std::size_t kMaxNesting = 32;

// Scans TOML `text` before the recursive parser sees it and throws ConfigError naming `file`
// and the line of a NUL byte (UTF-16 or binary files: a configuration is UTF-8 text) or of the
// point where arrays, inline tables and dotted keys nest deeper than kMaxNesting (strings and
// comments skipped). Linear in the text's length; does not validate the syntax otherwise.
void prescan(std::string_view text, const std::string& file);

// `text`, or its first `max_chars` characters and "... (N characters)" if it is longer: what
// messages echo of a key or value from the file.
std::string clipped(std::string_view text, std::size_t max_chars);

// One line from a toml++ parse error's description, "Error while parsing <what>: <problem>":
// "<problem> (while parsing <what>)".
std::string summarize_syntax_error(std::string_view description);

// A quoted, comma-separated list: "a", "b", "c".
std::string quoted_list(const std::vector<std::string_view>& items);

}  // namespace macrostep::config::detail
