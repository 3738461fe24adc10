// What every executor shares (executor.hpp).
#include "macrostep/executors/executor.hpp"

#include <string>
#include <utility>

namespace macrostep::executors {

void collect_runner_outcome(const runner::SubsystemRunner& runner, std::size_t i,
                            PassOutcome& outcome) {
  auto& so = outcome.subsystems.at(i);
  so.solver_ns = runner.nominal_ns();
  so.extra_ns = runner.extra_ns();
  so.nominal.outputs = runner.result(0).outputs;
  so.nominal.feedthrough = runner.result(0).feedthrough;
  so.nominal.stats = runner.result(0).stats;
  so.extra.resize(runner.run_count() - 1);
  for (std::size_t k = 0; k + 1 < runner.run_count(); ++k) {
    so.extra[k].outputs = runner.result(1 + k).outputs;
    so.extra[k].stats = runner.result(1 + k).stats;
  }
  if (outcome.ok) {
    if (std::string failure = runner.failure(); !failure.empty()) {
      outcome.ok = false;
      outcome.failed_subsystem = i;
      outcome.error = std::move(failure);
    }
  }
}

void evaluate_with_runner(runner::SubsystemRunner& runner, std::size_t i,
                          std::span<const double> inputs, EvaluationOutcome& outcome) {
  const runner::RunResult& r = runner.evaluate_outputs(inputs);
  auto& e = outcome.subsystems.at(i);
  e.outputs = r.outputs;
  e.feedthrough = r.feedthrough;
  if (outcome.ok && !r.error.empty()) {
    outcome.ok = false;
    outcome.failed_subsystem = i;
    outcome.error = r.error;
  }
}

}  // namespace macrostep::executors
