// The memory a [model] chain takes, checked before any of it is built (DESIGN.md contract 5: a
// configuration the machine cannot carry is an error before anything starts, not a bad_alloc
// after minutes). The file's own chain is checked when it is loaded (one copy: the realized
// parameters); a run checks again for the copies it makes (run/memory_estimate.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace macrostep::config {

// Measured peak resident memory per chain mass of one copy of the model (its parameters, the
// IDA vectors and history, the sparse Jacobian and its KLU factors, the snapshot): 1.4 KiB with
// 200,000 masses (run --monolithic, release build).
inline constexpr std::uint64_t kBytesPerMass = 1536;

// The memory the system offers a new process: MemAvailable of /proc/meminfo in bytes, or
// nothing if it cannot be read.
std::optional<std::uint64_t> available_memory();

// "" if `copies` copies of a chain of `masses` masses fit in available_memory() (or it is
// unknown), else the problem: "model.masses = N needs about X GiB of memory (...), but only Y
// GiB are available (MemAvailable); use fewer masses".
std::string memory_problem(std::uint64_t masses, std::size_t copies);

}  // namespace macrostep::config
