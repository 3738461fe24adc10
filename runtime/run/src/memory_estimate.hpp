// Refusing a model that the machine cannot hold, before any of it is built (private to the
// run library; DESIGN.md contract 5: a configuration the run cannot carry is an error
// before anything starts, not a bad_alloc after minutes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "macrostep/config/run_config.hpp"

namespace macrostep::run {

// Measured peak resident memory per chain mass of one copy of the model (its parameters, the
// IDA vectors and history, the sparse Jacobian and its KLU factors, the snapshot): 1.4 KiB with
// 200,000 masses (run --monolithic, release build).
inline constexpr std::uint64_t kBytesPerMass = 1536;

// The memory the system offers a new process: MemAvailable of /proc/meminfo in bytes, or
// nothing if it cannot be read.
std::optional<std::uint64_t> available_memory();

// Throws SetupError when a [model] chain held `copies` times (the master's model and every
// integrator of the subsystems) needs more than available_memory(); the message gives the
// estimate and what is available. [[subsystem]] descriptions are small and pass.
void check_memory(const config::RunConfig& config, std::size_t copies);

}  // namespace macrostep::run
