// The registry of coupling laws: every law a [[connection]] can name registers one LawEntry next
// to its own code (its name as written in TOML, its read arity, the variables it writes, the keys
// it takes, parse and make). The configuration reader, build_law() and coupling_names() consult
// the registry only, so a new law is its own files plus one registration: a built-in law one
// line in law_registry.cpp, a law of another library (a test's, a user's program) one call of
// register_law() before the configuration is read.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

// The parameters of one connection's law as its parse function made them. Each law derives its
// own type; the description shares the object immutably (std::shared_ptr<const LawParameters>),
// so copies of a description are cheap and thread-safe to read. A law without keys uses the
// base itself.
struct LawParameters {
  virtual ~LawParameters() = default;
};

// A [[connection]] table as a law's parse function sees it. The configuration reader implements
// it; every failure (a missing key, a wrong type, a value the law refuses) throws the reader's
// error naming file, line and key, so a law's messages look like every other message of the
// configuration. Valid only during the parse call it is passed to.
class LawTable {
 public:
  virtual ~LawTable() = default;
  virtual bool has(std::string_view key) const = 0;
  // Fails with "missing required key" at the table if `key` is absent.
  virtual void require(std::string_view key) const = 0;
  // A finite number (TOML integer or float); fails if absent or of another type.
  virtual double number(std::string_view key) const = 0;
  // An array of finite numbers with `size` entries (any size if `size` is SIZE_MAX); the size
  // message reads "must have one entry per <what> (<size>, got <n>)".
  virtual std::vector<double> numbers(std::string_view key, std::size_t size,
                                      std::string_view what) const = 0;
  // A TOML boolean; fails if absent or of another type.
  virtual bool boolean(std::string_view key) const = 0;
  // A string that must be one of `allowed`.
  virtual std::string choice(std::string_view key,
                             const std::vector<std::string_view>& allowed) const = 0;
  // The value as written in the file, for "(got ...)".
  virtual std::string source_text(std::string_view key) const = 0;
  // Throws the reader's error at `key` (at the table itself for an empty key).
  [[noreturn]] virtual void fail(std::string_view key, const std::string& problem) const = 0;
};

// number(key) > 0, else "must be > 0 (got <as written>)" at the key.
double positive(const LawTable& table, std::string_view key);
// number(key) >= 0, else "must be >= 0 (got <as written>)" at the key.
double non_negative(const LawTable& table, std::string_view key);

// One coupling variable a law writes.
struct LawWrite {
  // The key of the connection's `to` table listing the inputs this variable feeds; a law
  // writing one variable takes `to` as a plain input list instead.
  std::string to_key;
  // The variable is named "<connection>.<suffix>"; a law writing one variable names it
  // "<connection>" and leaves this empty.
  std::string suffix;
};

// A key a law takes besides the common ones (name, law, from, to, approximation).
struct LawKey {
  std::string name;
  std::string meaning;  // one line, for the reference documentation
};

struct LawEntry {
  std::string name;  // law = "<name>" in a [[connection]]
  // The number of outputs the law reads; 0: any number >= 1.
  std::size_t reads = 0;
  // The reads in order, for messages: "[x_left, v_left, x_right, v_right]".
  std::string read_order;
  std::vector<LawWrite> writes;  // at least one, in write order
  std::vector<LawKey> keys;      // in the order the "allowed:" list of messages shows them
  // For a law writing more than one variable: how `to` must look, completing "must be a table
  // <to_form> (got ...)"; e.g. "{position = ..., velocity = ...} for law \"displacement\"".
  std::string to_form;
  // Reads the law's keys from the connection's table (the reader has refused unknown keys and
  // resolved `from`: `reads` outputs, their count checked against `reads` above). Never null.
  std::function<std::shared_ptr<const LawParameters>(const LawTable& table, std::size_t reads)>
      parse;
  // The law of one connection: `names` from coupling_names(), `reads` the resolved outputs in
  // the law's order, `parameters` what parse gave (or what code built, e.g. the chain's cuts).
  // Throws std::invalid_argument for parameters the law refuses.
  std::function<std::unique_ptr<CouplingLaw>(std::vector<std::string> names,
                                             std::span<const OutputRef> reads,
                                             const LawParameters& parameters)>
      make;
};

// Registers a law. Throws std::logic_error if the name is taken, or the entry has no name, no
// written variable, no parse or no make function. Thread-safe; call it before reading a
// configuration that names the law.
void register_law(LawEntry entry);

// The entry registered under `name`, or null. The built-in laws are registered before the first
// lookup. Entries are never removed: the pointer stays valid for the program's life. Thread-safe.
const LawEntry* find_law(std::string_view name);

// The entry of `name`; throws std::invalid_argument "unknown coupling law" if none.
const LawEntry& law_entry(std::string_view name);

// Every registered name, built-in laws first, then in registration order.
std::vector<std::string> law_names();

// The parameters as the law's own type P; throws std::invalid_argument if they are another
// law's (a description assembled by hand with mismatching parameters).
template <class P>
const P& law_parameters(const LawParameters& parameters, std::string_view law_name) {
  if (const auto* p = dynamic_cast<const P*>(&parameters)) return *p;
  throw std::invalid_argument("coupling law " + std::string(law_name) +
                              ": parameters of another law");
}

}  // namespace macrostep::system
