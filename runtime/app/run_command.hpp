// The commands that run a model: `run` (co-simulation or --monolithic), `reference`, `resume`
// and, under mpirun, `run --executor mpi`. Each loads its configuration, installs the stop-signal
// handlers, runs, prints the summary and returns the exit status (usage.hpp); errors before any
// work propagate as UsageError, ConfigError or SetupError.
#pragma once

#include <string>
#include <vector>

#include "run_options.hpp"

namespace macrostep::app {

// `run CONFIG --monolithic` (reference = false) or `reference CONFIG`: the whole model in one IDA.
int run_model(const RunArgs& args, bool reference, const std::string& command_line);

// `run CONFIG`: the co-simulation of its [cosim] table with the command line's overrides.
// `arguments`: the words after `run` (kept in checkpoints, so that `resume` runs the same
// command).
int run_cosimulation(const RunArgs& args, const std::string& command_line,
                     std::vector<std::string> arguments);

// `resume CHECKPOINT`: the `run` command the checkpoint holds, continued from it.
int resume(const std::string& path, const std::string& command_line);

#ifdef MACROSTEP_MPI_BRIDGE
// `mpirun -np R macrostep run CONFIG --executor mpi`: rank 0 co-simulates with the MPI bridge,
// every other rank is a node agent. May edit argc and argv (MPI_Init).
int run_bridged(int* argc, char*** argv, const RunArgs& args, const std::string& command_line,
                std::vector<std::string> arguments);
#endif

}  // namespace macrostep::app
