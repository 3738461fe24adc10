// Refusing a model that the machine cannot hold, before any of it is built (private to the
// run library; DESIGN.md contract 5: a configuration the run cannot carry is an error
// before anything starts, not a bad_alloc after minutes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "macrostep/config/model_memory.hpp"
#include "macrostep/config/run_config.hpp"

namespace macrostep::run {

// Throws SetupError when the [model] chain of the file held `copies` times (the master's model
// and every integrator of the subsystems) needs more than config::available_memory(); the
// message gives the estimate and what is available (config::memory_problem). A file without
// [model] has no chain and passes: its built-in models are small.
void check_memory(const config::RunConfig& config, std::size_t copies);

}  // namespace macrostep::run
