// The interface-Jacobian strategies by name (jacobian_strategy.hpp): each variant registers
// itself with one add() line in its own file (name as the user writes it, a one-line
// description, a factory), and the iterative schemes ask the registry for the strategy their
// options name.
//
// Registration of the built-in variants: each variant's file defines a registration function
// that jacobian_registry.cpp calls from one list when the registry is first used. The variants
// live in a static library, and a self-registering static object there is dropped by the linker
// unless something references its object file; a called function is always linked, needs no
// whole-archive or object-library link options in every consumer, and fixes the order of the
// entries (the order of the list, which the names in error messages follow). Code outside the
// library (a test's own strategy) calls add() itself: an object file linked directly into a
// program is never dropped, so a static registration object works there.
//
// Thread-safety: add() before lookups from other threads (static initialisation or early in
// main); lookups are const and may run concurrently.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/corrector/corrector_options.hpp"
#include "macrostep/corrector/jacobian_strategy.hpp"

namespace macrostep::corrector {

using JacobianFactory =
    std::function<std::unique_ptr<InterfaceJacobianStrategy>(const CorrectorOptions&)>;

struct JacobianEntry {
  std::string name;         // as the user writes it: "fd", "quasi-newton"
  std::string description;  // one line
  JacobianFactory make;
};

class JacobianRegistry {
 public:
  // The registry with the built-in variants, registered on first use.
  static JacobianRegistry& instance();

  // Throws std::logic_error if `name` is taken or empty, or `make` is empty.
  void add(std::string name, std::string description, JacobianFactory make);
  // nullptr if no strategy has this name.
  const JacobianEntry* find(std::string_view name) const;
  // Throws std::invalid_argument naming the registered names if `name` is not one of them.
  std::unique_ptr<InterfaceJacobianStrategy> make(std::string_view name,
                                                  const CorrectorOptions& options) const;
  // In registration order (the built-ins first, in the order of their list).
  std::span<const JacobianEntry> entries() const { return entries_; }
  // The registered names in registration order: the vocabulary that the configuration and the
  // command line check a jacobian name against.
  std::vector<std::string_view> names() const;
  // The names whose traits satisfy `keep`, as "a, b or c" (`last` joins the last two).
  std::string names_where(const std::function<bool(const JacobianTraits&)>& keep,
                          std::string_view last = "or") const;

 private:
  JacobianRegistry();
  std::vector<JacobianEntry> entries_;
};

// The traits of the strategy named `name` (std::invalid_argument if none has it), for callers
// that size or check a run before it starts.
JacobianTraits jacobian_traits(std::string_view name);

}  // namespace macrostep::corrector
