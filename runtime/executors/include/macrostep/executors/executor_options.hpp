// What every executor is configured with, wherever its subsystems run (in this process, in worker
// processes, behind MPI node agents): the integrator settings, rollback, the jump handling of the
// input polynomials and the threads of a subsystem's runs. The in-process executor needs nothing
// else (InProcessOptions); ProcessOptions adds the worker processes' settings. The same values
// give the same results under every executor (DESIGN.md contract 1).
#pragma once

#include <cstddef>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/runner/subsystem_runner.hpp"

namespace macrostep::executors {

struct ExecutorOptions {
  // The IDA settings common to every subsystem ...
  ida::IntegratorOptions solver;
  // ... unless this holds one entry per subsystem (the [[subsystem]] solver keys), which
  // then replaces `solver` for that subsystem (solver_for). The process executor sends each
  // worker its subsystem's entry.
  std::vector<ida::IntegratorOptions> subsystem_solvers;
  // Snapshot every subsystem at each accepted point. Needed for reject(), extra runs, more than
  // one step() per macro step and import_state() (executor.hpp); only fixed-step explicit runs
  // without an estimator (exH) can do without (METHODS §4.7).
  bool rollback = true;
  // How the runs treat the jump of their input polynomial at T_N (default: nothing).
  runner::JumpOptions jumps;
  // Threads for the runs of one step: in-process the arena shared by all subsystems' runs, in a
  // worker process the arena of its subsystem's nominal and extra runs. 0: TBB's default (all
  // cores, or all the worker's PUs), 1: sequential.
  int threads = 0;
  // > 0: every nominal run samples its outputs on this output grid (runner::RunnerOptions::
  // output_interval), returned with the pass (runner::RunResult::sample_times / sample_values).
  double output_interval = 0.0;

  // The IDA settings of subsystem i (see subsystem_solvers).
  const ida::IntegratorOptions& solver_for(std::size_t i) const {
    return i < subsystem_solvers.size() ? subsystem_solvers[i] : solver;
  }
  // What subsystem i's runner::SubsystemRunner is built with, wherever it runs.
  runner::RunnerOptions runner_options(std::size_t i) const {
    return runner::RunnerOptions{solver_for(i), rollback, jumps, output_interval};
  }
};

}  // namespace macrostep::executors
