// In-process executor (executor.hpp; METHODS.md §3.1 step 3, §4.7 rollback, D-23).
#include "macrostep/executors/in_process_executor.hpp"

#include <tbb/task_arena.h>

#include <stdexcept>
#include <string>

#include "macrostep/runner/subsystem_runner.hpp"

namespace macrostep::executors {

// The worker threads: created once, not per macro step (an arena per step costs more than a
// short macro step does).
struct InProcessExecutor::Pool {
  explicit Pool(int threads)
      : arena(threads > 0 ? threads : static_cast<int>(tbb::task_arena::automatic)) {}
  tbb::task_arena arena;
};

InProcessExecutor::InProcessExecutor(const system::CoupledSystem& system,
                                     std::span<const double> u0, const InProcessOptions& options)
    : Executor(options.rollback) {
  if (u0.size() != system.coupling_count()) {
    throw std::invalid_argument("InProcessExecutor: u0 has the wrong size");
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    std::vector<double> inputs(system.subsystem(i).input_size());
    system.gather_inputs(i, u0, inputs);
    runners_.push_back(std::make_unique<runner::SubsystemRunner>(system.subsystem(i), inputs,
                                                                 options.runner_options(i)));
  }
  for (auto& r : runners_) stepping_.push_back(r.get());
  accepted_time_ = system.subsystem(0).initial_time();
  if (options.threads != 1) pool_ = std::make_unique<Pool>(options.threads);
}

InProcessExecutor::~InProcessExecutor() = default;

std::size_t InProcessExecutor::subsystem_count() const {
  return runners_.size();
}

void InProcessExecutor::do_step(double t_end, std::span<const SubsystemCommand> commands,
                                PassOutcome& outcome) {
  // Every (subsystem, run) is an independent task; run 0 of each is the nominal one.
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    runners_[i]->prepare(t_end, commands[i].nominal, commands[i].extra);
  }
  runner::run_prepared(stepping_, pool_ ? &pool_->arena : nullptr, tasks_);

  outcome.ok = true;
  outcome.error.clear();
  outcome.communication_ns = 0;
  outcome.subsystems.resize(runners_.size());
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    collect_runner_outcome(*runners_[i], i, outcome);
  }
}

void InProcessExecutor::do_evaluate_outputs(std::span<const std::vector<double>> inputs,
                                            runner::EventSide side, EvaluationOutcome& outcome) {
  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(runners_.size());
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    if (!inputs[i].empty()) evaluate_with_runner(*runners_[i], i, inputs[i], side, outcome);
  }
}

void InProcessExecutor::do_accept() {
  for (auto& r : runners_) r->accept();
  accepted_time_ = runners_.front()->accepted_time();
}

void InProcessExecutor::do_reject() {
  for (auto& r : runners_) r->reject();
}

double InProcessExecutor::accepted_time() const {
  return accepted_time_;
}

void InProcessExecutor::do_accepted_state(std::size_t i, std::span<double> z) const {
  runners_[i]->accepted_state(z);
}

ida::AdvanceStats InProcessExecutor::do_total_stats(std::size_t i) const {
  return runners_[i]->total_stats();
}

std::size_t InProcessExecutor::do_export_state(std::size_t i, const std::string& path) {
  return runners_[i]->export_state_to(path);
}

void InProcessExecutor::do_import_state(std::size_t i, const std::string& path) {
  runners_[i]->import_state_from(path);
  accepted_time_ = runners_[i]->accepted_time();
}

std::int64_t InProcessExecutor::do_snapshot_ns(std::size_t i) const {
  return runners_[i]->snapshot_ns();
}

}  // namespace macrostep::executors
