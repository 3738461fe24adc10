// What a plugin declares, checked when it is loaded (plugin.hpp): a plugin is foreign code, and
// a wrong size, pattern or name would otherwise surface later as a failed linear-solver setup,
// an out-of-bounds read, a broken result file, or an allocation that does not end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::plugin {

// Limits on the sizes a plugin declares. A plugin subsystem of more states is refused; so is one
// whose integrator would need more than kMaxSolverBytes by solver_memory_estimate(). A run holds
// several integrators of each subsystem (the nominal run, comparison or perturbed runs, the
// master's copy), so one integrator gets a fraction of a workstation's memory.
inline constexpr std::size_t kMaxStates = 1'000'000;
inline constexpr std::size_t kMaxInputs = 10'000;
inline constexpr std::size_t kMaxOutputs = 10'000;
inline constexpr std::uint64_t kMaxSolverBytes = std::uint64_t{4} << 30;  // 4 GiB

// Memory of one IDA + KLU integrator of a subsystem with `states` states and `nonzeros` entries
// in its Jacobian pattern, in bytes: per state the IDA vectors and history, the workspace
// snapshot and KLU's per-column arrays (kBytesPerState); per nonzero the sparse matrix, its
// copies (snapshot, consistent-derivative scratch) and KLU's factors without fill-in
// (kBytesPerNonzero). A lower bound: fill-in comes on top.
inline constexpr std::uint64_t kBytesPerState = 512;
inline constexpr std::uint64_t kBytesPerNonzero = 80;
std::uint64_t solver_memory_estimate(std::uint64_t states, std::uint64_t nonzeros);

// Throws std::invalid_argument "plugin <library>: ..." with the estimate if it exceeds
// kMaxSolverBytes.
void check_solver_memory(std::uint64_t states, std::uint64_t nonzeros, const std::string& library);

// Checks a subsystem built by the plugin `library` (its path, for the messages), in an order
// that never follows a size before it is known to be within its limit:
//  - state_size() <= kMaxStates, input_size() <= kMaxInputs, output_size() <= kMaxOutputs;
//  - state_roles() has state_size() entries, each a StateRole;
//  - the Jacobian pattern is a CSC pattern of the state size: column_start has n + 1 entries,
//    starts at 0, never decreases and ends at row_index.size(); every row index lies in
//    [0, n) and the rows of a column strictly increase;
//  - the memory estimate of its integrator is at most kMaxSolverBytes;
//  - the coupling patterns (output_jacobian_pattern, input_jacobian_pattern) have as many rows
//    as columns entries, every entry within the matrix, none twice;
//  - state, input and output names are non-empty, free of control characters, and unique
//    within each kind (they name result columns and connection ends);
//  - initial_time() is finite; no output feeds through unless has_feedthrough().
// Throws std::invalid_argument "plugin <library>: <what is wrong>".
void check_declarations(const model::Subsystem& subsystem, const std::string& library);

// Checks the initial point of a subsystem that check_declarations accepted, as the master first
// evaluates it (the inputs 0; initial_state()'s z0 does not depend on them):
//  - initial_time() is model::kStartTime (every run starts there);
//  - initial_state() returns without an exception, with finite values;
//  - if check_jacobians: every analytic Jacobian agrees with central differences there
//    (jacobian_check.hpp; the message names each wrong one's worst entry and both values).
// Throws std::invalid_argument "plugin <library>: <what is wrong>"; an exception of the model's
// functions is named as the plugin's.
void check_initial_point(const model::Subsystem& subsystem, const std::string& library,
                         bool check_jacobians);

}  // namespace macrostep::plugin
