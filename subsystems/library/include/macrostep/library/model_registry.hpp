// The registry of library models: every model described by a flat list of parameters registers
// one ModelEntry next to its code. Its parameter description is the one statement of the model's
// parameters: the configuration reader reads a [[subsystem]] table through it, the worker
// configuration carries (model name, parameter values) through it, and the reference
// documentation's parameter tables are checked against it. A new model is its own files plus one
// registration: a built-in model one line in model_registry.cpp, a model of another library (a
// test's, a user's program) one call of register_model() in every process that builds it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

// One parameter value: a number (double, carried bit for bit), an integer, a boolean, a string
// or a list of numbers.
using ParameterValue = std::variant<double, std::int64_t, bool, std::string, std::vector<double>>;

enum class ParameterType : std::uint8_t { kNumber, kInteger, kBool, kString, kNumberList };

// A bound every number (and every entry of a number list) must satisfy; the reader's messages:
// "must be > 0 (got ...)", "must be >= 0 (got ...)".
enum class Bound : std::uint8_t { kAny, kPositive, kNonNegative };

struct ParameterSpec {
  std::string name;  // the key of the [[subsystem]] table
  ParameterType type = ParameterType::kNumber;
  bool required = false;
  ParameterValue default_value;  // the value when the key is absent (not required)
  Bound bound = Bound::kAny;
  // Number lists: the required entry count (0: any), and what completes "must have one entry per
  // <size_what>".
  std::size_t size = 0;
  std::string size_what;
  std::string unit;  // "kg", "N/m", "" for none
  std::string doc;   // one line
  // Strings only: the value names a file. The reader resolves a relative path against the
  // configuration file's directory (as plugins' and FMUs' paths) and refuses a missing file.
  bool path = false;
};

// The values of one model's parameters by name, in the order of its description. Every
// parameter has a value (the reader fills in defaults).
class ParameterValues {
 public:
  // Sets `name` (replacing a value of the same name).
  void set(std::string name, ParameterValue value);
  const ParameterValue* find(std::string_view name) const;
  // The value of `name` as a type; throw std::invalid_argument if absent or of another type.
  double number(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& string(std::string_view name) const;
  const std::vector<double>& numbers(std::string_view name) const;
  const std::vector<std::pair<std::string, ParameterValue>>& entries() const { return entries_; }
  bool operator==(const ParameterValues&) const = default;

 private:
  const ParameterValue& at(std::string_view name) const;
  std::vector<std::pair<std::string, ParameterValue>> entries_;
};

// A problem of a combination of values, reported by the reader at `key` (empty: the table).
struct ParameterProblem {
  std::string key;
  std::string message;
};

struct ModelEntry {
  std::string name;                       // model = "<name>"
  std::string summary;                    // one line for the documentation
  std::vector<ParameterSpec> parameters;  // in the order of the "allowed:" list of messages
  // Hints for an input that no connection feeds: input name → text appended to the message,
  // e.g. {"rod_force", " (a free rod: rod_coupled = false)"}.
  std::vector<std::pair<std::string, std::string>> unfed_hints;
  // Rules over several values (after every value passed its own type and bound); may be empty.
  std::function<std::optional<ParameterProblem>(const ParameterValues&)> check;
  // The subsystem of complete, checked values. Throws std::invalid_argument for values it
  // refuses. Called by the master and by every worker process; must be deterministic.
  std::function<std::unique_ptr<model::Subsystem>(const ParameterValues&)> build;
  // One line for messages ("PID controller"); empty: the name.
  std::function<std::string(const ParameterValues&)> describe;
};

// Registers a model. Throws std::logic_error if the name is taken or the entry has no name or
// no build function. Thread-safe.
void register_model(ModelEntry entry);

// The entry registered under `name`, or null. Built-in models are registered before the first
// lookup; entries are never removed, so the pointer stays valid. Thread-safe.
const ModelEntry* find_model(std::string_view name);

// Every registered name, built-in models first, then in registration order.
std::vector<std::string> model_names();

// A model of the registry with its values: a ModelDescription alternative.
struct RegisteredModel {
  std::string model;
  ParameterValues values;
};

// The default values of every parameter of `entry` that is not required.
ParameterValues default_values(const ModelEntry& entry);

// Binds a model's parameter description to the members of its parameter struct P, so that the
// struct, the description and the conversions between them are written once. P must be
// default-constructible: the defaults of the description are those of P{}.
template <class P>
class ParameterBinding {
 public:
  ParameterBinding& number(std::string name, double P::*member, Bound bound, bool required,
                           std::string unit, std::string doc) {
    add(
        {std::move(name), ParameterType::kNumber, required, P{}.*member, bound, 0, "",
         std::move(unit), std::move(doc)},
        [member](P& p, const ParameterValue& v) { p.*member = std::get<double>(v); },
        [member](const P& p) -> ParameterValue { return p.*member; });
    return *this;
  }
  ParameterBinding& boolean(std::string name, bool P::*member, std::string doc) {
    add(
        {std::move(name), ParameterType::kBool, false, P{}.*member, Bound::kAny, 0, "", "",
         std::move(doc)},
        [member](P& p, const ParameterValue& v) { p.*member = std::get<bool>(v); },
        [member](const P& p) -> ParameterValue { return p.*member; });
    return *this;
  }
  // A string (not a file name), e.g. the unit a model reports for its outputs.
  ParameterBinding& string(std::string name, std::string P::*member, std::string doc) {
    add(
        {std::move(name), ParameterType::kString, false, P{}.*member, Bound::kAny, 0, "", "",
         std::move(doc)},
        [member](P& p, const ParameterValue& v) { p.*member = std::get<std::string>(v); },
        [member](const P& p) -> ParameterValue { return p.*member; });
    return *this;
  }
  // A fixed-size array of numbers (size N entries, "one entry per <what>").
  template <std::size_t N>
  ParameterBinding& numbers(std::string name, std::array<double, N> P::*member, Bound bound,
                            std::string what, std::string unit, std::string doc) {
    const std::array<double, N> d = P{}.*member;
    add(
        {std::move(name), ParameterType::kNumberList, false,
         std::vector<double>(d.begin(), d.end()), bound, N, std::move(what), std::move(unit),
         std::move(doc)},
        [member](P& p, const ParameterValue& v) {
          const auto& list = std::get<std::vector<double>>(v);
          for (std::size_t k = 0; k < N && k < list.size(); ++k) (p.*member)[k] = list[k];
        },
        [member](const P& p) -> ParameterValue {
          return std::vector<double>((p.*member).begin(), (p.*member).end());
        });
    return *this;
  }

  const std::vector<ParameterSpec>& specs() const { return specs_; }
  // The struct of `values` (members without a value keep P{}'s).
  P to_struct(const ParameterValues& values) const {
    P p{};
    for (std::size_t k = 0; k < specs_.size(); ++k) {
      if (const ParameterValue* v = values.find(specs_[k].name)) setters_[k](p, *v);
    }
    return p;
  }
  ParameterValues to_values(const P& p) const {
    ParameterValues values;
    for (std::size_t k = 0; k < specs_.size(); ++k) values.set(specs_[k].name, getters_[k](p));
    return values;
  }

 private:
  void add(ParameterSpec spec, std::function<void(P&, const ParameterValue&)> set,
           std::function<ParameterValue(const P&)> get) {
    specs_.push_back(std::move(spec));
    setters_.push_back(std::move(set));
    getters_.push_back(std::move(get));
  }
  std::vector<ParameterSpec> specs_;
  std::vector<std::function<void(P&, const ParameterValue&)>> setters_;
  std::vector<std::function<ParameterValue(const P&)>> getters_;
};

}  // namespace macrostep::library
