// The in-process executor: every subsystem's runner::SubsystemRunner lives in the master process
// and the runs of a macro step execute as TBB tasks of one arena (nominal and extra runs of all
// subsystems in parallel when cores are free). It is the reference the other executors are compared
// with (DESIGN.md contract 1). See executor.hpp for the call order.
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::executors {

struct InProcessOptions {
  ida::IntegratorOptions solver;
  // Empty, or one entry per subsystem replacing `solver` for it (solver_of, executor.hpp).
  std::vector<ida::IntegratorOptions> subsystem_solvers;
  // Snapshot every subsystem at each accepted point. Needed for reject() and for extra runs;
  // only fixed-step explicit runs without an estimator (exH) can do without (METHODS §4.7).
  bool rollback = true;
  // How the runs treat the jump of their input polynomial at T_N (issue 11; default: nothing).
  runner::JumpOptions jumps;
  // Worker threads for the runs of a step; 0 = TBB's default (all cores), 1 = sequential.
  int threads = 0;
};

class InProcessExecutor final : public Executor {
 public:
  // u0: the consistent coupling variables at t0 (CoupledSystem::initial_couplings()). The
  // system's subsystems must outlive the executor.
  InProcessExecutor(const system::CoupledSystem& system, std::span<const double> u0,
                    const InProcessOptions& options);
  ~InProcessExecutor() override;

  std::size_t subsystem_count() const override;
  void step(double t_end, std::span<const SubsystemCommand> commands,
            PassOutcome& outcome) override;
  // The evaluated subsystems one after the other in this thread (each evaluation is a model
  // call, far cheaper than a task).
  void evaluate_outputs(std::span<const std::vector<double>> inputs,
                        EvaluationOutcome& outcome) override;
  void accept() override;
  void reject() override;
  double accepted_time() const override;
  void accepted_state(std::size_t i, std::span<double> z) const override;
  ida::AdvanceStats total_stats(std::size_t i) const override;
  std::int64_t snapshot_ns(std::size_t i) const override;
  std::size_t export_state(std::size_t i, const std::string& path) override;
  void import_state(std::size_t i, const std::string& path) override;

 private:
  struct Pool;
  InProcessOptions options_;
  std::vector<std::unique_ptr<runner::SubsystemRunner>> runners_;
  std::vector<std::pair<std::size_t, std::size_t>> tasks_;  // (subsystem, run) of a step
  std::unique_ptr<Pool> pool_;  // one TBB arena for the executor's lifetime (threads != 1)
  double accepted_time_ = 0.0;
  bool stepped_ = false;  // a step() ran since the last accept() / reject()
  bool step_ok_ = false;  // and its outcome was ok
};

}  // namespace macrostep::executors
