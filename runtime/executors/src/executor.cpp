// What every executor shares (executor.hpp): the call-order checks and the reading of a
// runner's results.
#include "macrostep/executors/executor.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace macrostep::executors {

void Executor::check_index(std::size_t i, const char* method) const {
  if (i >= subsystem_count()) {
    throw std::out_of_range(
        fmt::format("Executor::{}: subsystem index {} of {}", method, i, subsystem_count()));
  }
}

void Executor::step(double t_end, std::span<const SubsystemCommand> commands,
                    PassOutcome& outcome) {
  if (commands.size() != subsystem_count()) {
    throw std::invalid_argument("Executor::step: one command per subsystem required");
  }
  if (!rollback_) {
    if (phase_ != Phase::kBetween) {
      throw std::logic_error("Executor::step: a second pass from T_N needs rollback");
    }
    for (const auto& c : commands) {
      if (!c.extra.empty()) throw std::logic_error("Executor::step: extra runs need rollback");
    }
  }
  // From here T_N's workspace may be touched: a step() that throws is a failed one.
  phase_ = Phase::kFailed;
  do_step(t_end, commands, outcome);
  phase_ = outcome.ok ? Phase::kStepped : Phase::kFailed;
}

void Executor::evaluate_outputs(std::span<const std::vector<double>> inputs,
                                EvaluationOutcome& outcome, runner::EventSide side) {
  if (phase_ != Phase::kStepped) {
    throw std::logic_error(
        phase_ == Phase::kBetween
            ? "Executor::evaluate_outputs: needs a step() (before its accept() / reject())"
            : "Executor::evaluate_outputs: the last step() failed");
  }
  if (inputs.size() != subsystem_count()) {
    throw std::invalid_argument("Executor::evaluate_outputs: one entry per subsystem required");
  }
  do_evaluate_outputs(inputs, side, outcome);
}

void Executor::accept() {
  if (phase_ != Phase::kStepped) {
    throw std::logic_error(phase_ == Phase::kBetween
                               ? "Executor::accept: no step to accept"
                               : "Executor::accept: the last step() failed (step again or reject)");
  }
  phase_ = Phase::kBetween;
  do_accept();
}

void Executor::reject() {
  if (phase_ == Phase::kBetween) throw std::logic_error("Executor::reject: no step to reject");
  if (!rollback_) {
    throw std::logic_error("Executor::reject: rollback is disabled (fixed-step mode)");
  }
  phase_ = Phase::kBetween;
  do_reject();
}

void Executor::accepted_state(std::size_t i, std::span<double> z) const {
  check_index(i, "accepted_state");
  if (phase_ != Phase::kBetween) {
    throw std::logic_error("Executor::accepted_state: call between macro steps");
  }
  do_accepted_state(i, z);
}

ida::AdvanceStats Executor::total_stats(std::size_t i) const {
  check_index(i, "total_stats");
  return do_total_stats(i);
}

std::int64_t Executor::snapshot_ns(std::size_t i) const {
  check_index(i, "snapshot_ns");
  return do_snapshot_ns(i);
}

std::size_t Executor::export_state(std::size_t i, const std::string& path) {
  check_index(i, "export_state");
  if (phase_ != Phase::kBetween) {
    throw std::logic_error("Executor::export_state: call between macro steps");
  }
  return do_export_state(i, path);
}

void Executor::import_state(std::size_t i, const std::string& path) {
  check_index(i, "import_state");
  if (phase_ != Phase::kBetween) {
    throw std::logic_error("Executor::import_state: call between macro steps");
  }
  if (!rollback_) throw std::logic_error("Executor::import_state: needs rollback");
  do_import_state(i, path);
}

void collect_runner_outcome(const runner::SubsystemRunner& runner, std::size_t i,
                            PassOutcome& outcome) {
  auto& so = outcome.subsystems.at(i);
  so.solver_ns = runner.nominal_ns();
  so.extra_ns = runner.extra_ns();
  so.nominal.outputs = runner.result(0).outputs;
  so.nominal.feedthrough = runner.result(0).feedthrough;
  so.nominal.stats = runner.result(0).stats;
  so.nominal.sample_times = runner.result(0).sample_times;
  so.nominal.sample_values = runner.result(0).sample_values;
  so.nominal.event_outputs = runner.result(0).event_outputs;
  so.nominal.next_event = runner.result(0).next_event;
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
      outcome.terminated = runner.terminated();
    }
  }
}

void evaluate_with_runner(runner::SubsystemRunner& runner, std::size_t i,
                          std::span<const double> inputs, runner::EventSide side,
                          EvaluationOutcome& outcome) {
  const runner::RunResult& r = runner.evaluate_outputs(inputs, side);
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
