// The keys each table of the run configuration accepts, defined once (private to
// macrostep_config). Every reader checks its table with Node::allow_only against one of these
// lists, and key_tables() (config_keys.hpp) lists the same definitions for `macrostep
// config-keys` and the reference test; keys whose set is registered elsewhere (a model's
// parameters, a coupling law's keys, the top-level sections) are taken from there. A key list
// written at an allow_only call instead would escape that test: add a table here.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/system/law_registry.hpp"

namespace macrostep::config::detail {

using KeyList = std::vector<std::string_view>;

// The tables whose keys do not depend on a name given in the file.
enum class Table : std::uint8_t {
  kModel,            // [model]
  kElement,          // [model.element]: the element law's keys and modulation
  kModulation,       // model.element.modulation = {...}
  kMassOverride,     // [[model.mass_override]]
  kElementOverride,  // [[model.element_override]]
  kValueTable,       // a value written as an inline table: {uniform = [a, b]}, ...
  kPartition,        // [partition]
  kSolver,           // [solver]: the solver keys and micro_step_stop
  kSimulation,       // [simulation]
  kOutput,           // [output]
  kCosim,            // [cosim]
  kExecutor,         // [executor]
  kShaft,            // a drive_train's shaft = [{...}]: the element law's keys
  kLoad,             // a drive_train's load = [{...}]
};

// The keys of `table`, in the order that "unknown key ... (allowed: ...)" lists them.
const KeyList& keys_of(Table table);

// The keys a [[subsystem]] may carry besides its model's: the keys of [solver] without
// micro_step_stop (the subsystem's own IDA settings).
const KeyList& solver_keys_list();

// The selection keys of a [[model.force]] (exactly one of them per force).
const KeyList& force_selection_keys();

// Keys of one table of which a file gives exactly one (the readers refuse two): [partition]'s
// subsystems and sizes; a [[model.force]]'s selections; an impulse's time and times. `table` is
// the table's key path without array indices ("partition", "model.force"). A --set of one of
// them replaces the file's other (overrides.cpp), since an edit cannot remove a key.
struct AlternativeKeys {
  std::string_view table;
  KeyList keys;
};
const std::vector<AlternativeKeys>& alternative_keys();
// The values of a [[model.force]]'s type, and the keys a force of `type` accepts: type, the
// selections, alternate_sign, amplitude and the type's own. std::logic_error for another type.
const KeyList& force_types();
KeyList force_keys(std::string_view type);

// The models of [[subsystem]] whose tables this library reads itself (not through a
// library::ModelEntry): drive_train, chain_segment, plugin, fmu; and the keys of each: name,
// model, the model's own and (except fmu) the solver keys. std::logic_error for another model.
const KeyList& reader_models();
KeyList subsystem_keys(std::string_view model);

// The keys of a [[subsystem]] of a registered model: name, model, the entry's parameters and
// the solver keys.
KeyList registered_model_keys(const library::ModelEntry& entry);

// The keys of a [[connection]] of `law`: name, law, from, to, approximation and the law's own;
// and those of its `to` table (one per written variable), empty for a law writing one variable
// (its `to` is a list of inputs).
KeyList connection_keys(const system::LawEntry& law);
KeyList connection_to_keys(const system::LawEntry& law);

}  // namespace macrostep::config::detail
