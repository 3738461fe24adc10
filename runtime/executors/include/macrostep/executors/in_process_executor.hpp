// The in-process executor: every subsystem's runner::SubsystemRunner lives in the master process
// and the runs of a macro step execute as TBB tasks of one arena (nominal and extra runs of all
// subsystems in parallel when cores are free). It is the reference the other executors are compared
// with (DESIGN.md contract 1). See executor.hpp for the call order.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::executors {

// The in-process executor needs only what every executor shares.
using InProcessOptions = ExecutorOptions;

class InProcessExecutor final : public Executor {
 public:
  // u0: the consistent coupling variables at t0 (CoupledSystem::initial_couplings()). The
  // system's subsystems must outlive the executor.
  InProcessExecutor(const system::CoupledSystem& system, std::span<const double> u0,
                    const InProcessOptions& options);
  ~InProcessExecutor() override;

  std::size_t subsystem_count() const override;
  double accepted_time() const override;

 private:
  void do_step(double t_end, std::span<const SubsystemCommand> commands,
               PassOutcome& outcome) override;
  // The evaluated subsystems one after the other in this thread (each evaluation is a model
  // call, far cheaper than a task).
  void do_evaluate_outputs(std::span<const std::vector<double>> inputs, runner::EventSide side,
                           EvaluationOutcome& outcome) override;
  void do_accept() override;
  void do_reject() override;
  void do_accepted_state(std::size_t i, std::span<double> z) const override;
  ida::AdvanceStats do_total_stats(std::size_t i) const override;
  std::int64_t do_snapshot_ns(std::size_t i) const override;
  std::size_t do_export_state(std::size_t i, const std::string& path) override;
  void do_import_state(std::size_t i, const std::string& path) override;

  struct Pool;
  std::vector<std::unique_ptr<runner::SubsystemRunner>> runners_;
  std::vector<runner::SubsystemRunner*> stepping_;          // runners_, for run_prepared()
  std::vector<std::pair<std::size_t, std::size_t>> tasks_;  // (subsystem, run) of a step
  std::unique_ptr<Pool> pool_;  // one TBB arena for the executor's lifetime (threads != 1)
  double accepted_time_ = 0.0;
};

}  // namespace macrostep::executors
