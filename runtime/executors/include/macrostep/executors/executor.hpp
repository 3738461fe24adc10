// How the master drives the subsystems (DESIGN.md data flow; METHODS.md §3.1 step 3, §4.7).
//
// An Executor owns one integrator per subsystem (plus auxiliary instances for extra runs) and
// the workspace snapshot of every subsystem at the accepted macro point T_N. The schemes talk
// to it only through this interface, so that the in-process executor (the reference, contract
// 1) and the process executor of a later issue are interchangeable without touching a scheme.
//
// Call order:
//   1. construct (every subsystem at its consistent initial state at t0 with the initial
//      coupling variables; that state is the first accepted state T_0)
//   2. repeat: step(T_{N+1}, commands, outcome) then exactly one of accept() or reject().
//      step() always starts from the accepted state T_N: after a reject() (or a failed step)
//      every subsystem is restored from its T_N snapshot first.
//   3. accepted_state() / accepted_time() between steps.
//
// Runs of one step: per subsystem the nominal run (its inputs from `nominal`) and zero or more
// extra runs (comparison run of exLE/exMD now, perturbed runs later), each starting from the
// same T_N workspace (a clone) and integrated with its own polynomial. Only the nominal run
// continues; extra runs are discarded. The outputs of every run at T_{N+1} are returned.
//
// Determinism (contract 1): results do not depend on how runs are scheduled; every run is a
// pure function of the T_N workspace and its polynomial.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/coupling/support_points.hpp"
#include "macrostep/ida/integrator.hpp"

namespace macrostep::executors {

// The work of one subsystem in one macro-step attempt.
struct SubsystemCommand {
  coupling::SupportPoints nominal;
  std::vector<coupling::SupportPoints> extra;
};

struct RunOutcome {
  std::vector<double> outputs;  // y at T_{N+1}
  ida::AdvanceStats stats;
};

struct SubsystemOutcome {
  RunOutcome nominal;
  std::vector<RunOutcome> extra;
  std::int64_t solver_ns = 0;  // wall time of the nominal run (T_{L,N}, seed 000 Eq. 4.5)
  std::int64_t extra_ns = 0;   // wall time of the extra runs together (restores excluded)
};

struct StepOutcome {
  bool ok = true;
  // When !ok: which subsystem failed, and why (IDA error text with time). The step must be
  // rejected; the executor has not modified the accepted state.
  std::size_t failed_subsystem = 0;
  std::string error;
  std::vector<SubsystemOutcome> subsystems;
  // Executors with a transport (processes): the slowest subsystem's send-to-reply time minus
  // its busy time in the worker; 0 in-process.
  std::int64_t communication_ns = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;

  virtual std::size_t subsystem_count() const = 0;

  // Integrates every subsystem from T_N to t_end (> T_N). commands.size() == subsystem_count().
  virtual void step(double t_end, std::span<const SubsystemCommand> commands,
                    StepOutcome& outcome) = 0;

  // The nominal states at T_{N+1} become the accepted state (snapshots are taken if rollback
  // is enabled).
  virtual void accept() = 0;

  // Discards the attempt; the next step() starts again from T_N. Requires rollback.
  virtual void reject() = 0;

  virtual double accepted_time() const = 0;
  // Full state z of subsystem i at the accepted time (size state_size()).
  virtual void accepted_state(std::size_t i, std::span<double> z) const = 0;

  // Work counters summed over every run (nominal and extra, rejected attempts included).
  virtual ida::AdvanceStats total_stats(std::size_t i) const = 0;

  // Wall time subsystem i spent on workspace snapshots so far: saves at accept(), restores at
  // reject() and the clones for extra runs ("sws dump", seed 000 §4.4).
  virtual std::int64_t snapshot_ns(std::size_t i) const = 0;
};

}  // namespace macrostep::executors
