// In-process executor (executor.hpp; METHODS.md §3.1 step 3, §4.7 rollback, D-23).
#include "macrostep/executors/in_process_executor.hpp"

#include <tbb/task_arena.h>

#include <stdexcept>
#include <string>

#include "macrostep/runner/parallel_runs.hpp"

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
    : options_(options) {
  if (u0.size() != system.coupling_count()) {
    throw std::invalid_argument("InProcessExecutor: u0 has the wrong size");
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    std::vector<double> inputs(system.subsystem(i).input_size());
    system.gather_inputs(i, u0, inputs);
    const runner::RunnerOptions runner_options{
        solver_of(options.solver, options.subsystem_solvers, i), options.rollback, options.jumps};
    runners_.push_back(
        std::make_unique<runner::SubsystemRunner>(system.subsystem(i), inputs, runner_options));
  }
  accepted_time_ = system.subsystem(0).initial_time();
  if (options.threads != 1) pool_ = std::make_unique<Pool>(options.threads);
}

InProcessExecutor::~InProcessExecutor() = default;

std::size_t InProcessExecutor::subsystem_count() const {
  return runners_.size();
}

void InProcessExecutor::step(double t_end, std::span<const SubsystemCommand> commands,
                             PassOutcome& outcome) {
  if (commands.size() != runners_.size()) {
    throw std::invalid_argument("InProcessExecutor::step: one command per subsystem required");
  }
  if (stepped_ && !options_.rollback) {
    throw std::logic_error("InProcessExecutor::step: a second pass from T_N needs rollback");
  }
  // Every (subsystem, run) is an independent task; run 0 of each is the nominal one.
  tasks_.clear();
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    runners_[i]->prepare(t_end, commands[i].nominal, commands[i].extra);
    for (std::size_t r = 0; r < runners_[i]->run_count(); ++r) tasks_.push_back({i, r});
  }
  stepped_ = true;
  if (!pool_ || tasks_.size() == 1) {
    for (const auto& [i, r] : tasks_) runners_[i]->execute(r);
  } else {
    runner::parallel_runs(pool_->arena, tasks_.size(), [&](std::size_t k) {
      runners_[tasks_[k].first]->execute(tasks_[k].second);
    });
  }

  outcome.ok = true;
  outcome.error.clear();
  outcome.communication_ns = 0;
  outcome.subsystems.resize(runners_.size());
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    collect_runner_outcome(*runners_[i], i, outcome);
  }
  step_ok_ = outcome.ok;
}

void InProcessExecutor::evaluate_outputs(std::span<const std::vector<double>> inputs,
                                         EvaluationOutcome& outcome) {
  if (!stepped_ || !step_ok_) {
    throw std::logic_error(
        "InProcessExecutor::evaluate_outputs: needs a successful step() before accept() / "
        "reject()");
  }
  if (inputs.size() != runners_.size()) {
    throw std::invalid_argument("InProcessExecutor::evaluate_outputs: one entry per subsystem");
  }
  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(runners_.size());
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    if (!inputs[i].empty()) evaluate_with_runner(*runners_[i], i, inputs[i], outcome);
  }
}

void InProcessExecutor::accept() {
  if (!stepped_) throw std::logic_error("InProcessExecutor::accept: no step to accept");
  for (auto& r : runners_) r->accept();
  accepted_time_ = runners_.front()->accepted_time();
  stepped_ = false;
}

void InProcessExecutor::reject() {
  if (!stepped_) throw std::logic_error("InProcessExecutor::reject: no step to reject");
  if (!options_.rollback) {
    throw std::logic_error("InProcessExecutor::reject: rollback is disabled (fixed-step mode)");
  }
  for (auto& r : runners_) r->reject();
  stepped_ = false;
}

double InProcessExecutor::accepted_time() const {
  return accepted_time_;
}

void InProcessExecutor::accepted_state(std::size_t i, std::span<double> z) const {
  if (stepped_) {
    throw std::logic_error("InProcessExecutor::accepted_state: call between steps");
  }
  runners_.at(i)->accepted_state(z);
}

ida::AdvanceStats InProcessExecutor::total_stats(std::size_t i) const {
  return runners_.at(i)->total_stats();
}

std::size_t InProcessExecutor::export_state(std::size_t i, const std::string& path) {
  if (stepped_) throw std::logic_error("InProcessExecutor::export_state: call between steps");
  return runners_.at(i)->export_state_to(path);
}

void InProcessExecutor::import_state(std::size_t i, const std::string& path) {
  if (stepped_) throw std::logic_error("InProcessExecutor::import_state: call between steps");
  runners_.at(i)->import_state_from(path);
  accepted_time_ = runners_[i]->accepted_time();
}

std::int64_t InProcessExecutor::snapshot_ns(std::size_t i) const {
  return runners_.at(i)->snapshot_ns();
}

}  // namespace macrostep::executors
