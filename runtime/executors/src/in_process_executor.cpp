// In-process executor (executor.hpp; METHODS.md §3.1 step 3, §4.7 rollback, D-23).
#include "macrostep/executors/in_process_executor.hpp"

#include <tbb/task_arena.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "macrostep/worker/parallel_runs.hpp"

namespace macrostep::executors {

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The integrator's view of a step polynomial. The SupportPoints are copied in, so a command
// may be discarded once step() returns.
class PolynomialInput final : public model::InputFunction {
 public:
  coupling::SupportPoints points;
  void evaluate(double t, std::span<double> u) const override { points.evaluate(t, u); }
};

}  // namespace

// The worker threads: created once, not per macro step (an arena per step costs more than a
// short macro step does).
struct InProcessExecutor::Pool {
  explicit Pool(int threads)
      : arena(threads > 0 ? threads : static_cast<int>(tbb::task_arena::automatic)) {}
  tbb::task_arena arena;
};

// Everything the executor keeps for one subsystem.
struct InProcessExecutor::Slot {
  const model::Subsystem* subsystem = nullptr;
  PolynomialInput nominal_input;
  std::unique_ptr<ida::Integrator> nominal;
  std::unique_ptr<ida::WorkspaceSnapshot> snapshot;  // accepted state T_N
  std::vector<PolynomialInput> extra_inputs;
  std::vector<std::unique_ptr<ida::Integrator>> extra;
  // Per-step results, written by the runs' tasks.
  SubsystemOutcome outcome;
  std::vector<std::string> errors;       // [0] nominal, [1 + k] extra run k
  std::vector<std::int64_t> restore_ns;  // per extra run of the current step
  std::int64_t snapshot_ns_total = 0;
};

InProcessExecutor::InProcessExecutor(const system::CoupledSystem& system,
                                     std::span<const double> u0, const InProcessOptions& options)
    : system_(system), options_(options) {
  if (u0.size() != system.coupling_count()) {
    throw std::invalid_argument("InProcessExecutor: u0 has the wrong size");
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    auto slot = std::make_unique<Slot>();
    slot->subsystem = &system.subsystem(i);
    std::vector<double> inputs(slot->subsystem->input_size());
    system.gather_inputs(i, u0, inputs);
    // Until the first step the inputs are the constant u0 (a degree-0 polynomial), which makes
    // the integrator's initial state consistent with the initial coupling variables.
    const double t0 = slot->subsystem->initial_time();
    auto& p = slot->nominal_input.points;
    p.degree = 0;
    p.channels = static_cast<std::uint32_t>(inputs.size());
    p.step_begin = t0;
    p.time[0] = t0 + 1.0;
    for (std::size_t c = 0; c < inputs.size(); ++c) p.value[c][0] = inputs[c];
    slot->nominal = std::make_unique<ida::Integrator>(
        *slot->subsystem, options.solver, inputs.empty() ? nullptr : &slot->nominal_input);
    if (options.rollback) slot->snapshot = slot->nominal->make_snapshot();
    slots_.push_back(std::move(slot));
  }
  accepted_time_ = system.subsystem(0).initial_time();
  if (options.threads != 1) pool_ = std::make_unique<Pool>(options.threads);
}

InProcessExecutor::~InProcessExecutor() = default;

std::size_t InProcessExecutor::subsystem_count() const {
  return slots_.size();
}

void InProcessExecutor::step(double t_end, std::span<const SubsystemCommand> commands,
                             StepOutcome& outcome) {
  if (commands.size() != slots_.size()) {
    throw std::invalid_argument("InProcessExecutor::step: one command per subsystem required");
  }
  if (stepped_) {
    throw std::logic_error("InProcessExecutor::step: accept() or reject() the previous step");
  }
  // Lay out the runs as independent tasks: (subsystem, run), run 0 the nominal one.
  struct Task {
    std::size_t slot;
    std::size_t run;
  };
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    const auto& cmd = commands[i];
    if (!cmd.extra.empty() && !options_.rollback) {
      throw std::logic_error("InProcessExecutor: extra runs need rollback snapshots");
    }
    s.nominal_input.points = cmd.nominal;
    while (s.extra.size() < cmd.extra.size()) {
      s.extra_inputs.emplace_back();
      s.extra.push_back(nullptr);
    }
    for (std::size_t k = 0; k < cmd.extra.size(); ++k) s.extra_inputs[k].points = cmd.extra[k];
    s.outcome.extra.resize(cmd.extra.size());
    s.outcome.solver_ns = s.outcome.extra_ns = 0;
    s.errors.assign(1 + cmd.extra.size(), std::string());
    s.restore_ns.assign(cmd.extra.size(), 0);
    for (std::size_t r = 0; r <= cmd.extra.size(); ++r) tasks.push_back({i, r});
  }
  // Extra integrators are created on first use (outside the parallel region: a new instance
  // must not race with others); pointers to inputs are stable from here on.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    for (std::size_t k = 0; k < commands[i].extra.size(); ++k) {
      if (!s.extra[k]) {
        s.extra[k] =
            std::make_unique<ida::Integrator>(*s.subsystem, options_.solver, &s.nominal_input);
      }
      s.extra[k]->set_input(&s.extra_inputs[k]);
    }
  }

  auto run_task = [&](const Task& task) {
    Slot& s = *slots_[task.slot];
    try {
      if (task.run == 0) {
        const auto t0 = now_ns();
        s.outcome.nominal.stats = s.nominal->advance_to(t_end);
        s.outcome.nominal.outputs.resize(s.subsystem->output_size());
        s.nominal->outputs(s.outcome.nominal.outputs);
        s.outcome.solver_ns = now_ns() - t0;
      } else {
        const std::size_t k = task.run - 1;
        auto& integ = *s.extra[k];
        const auto t0 = now_ns();
        integ.restore(*s.snapshot);  // the clone of the T_N workspace (D-23)
        s.restore_ns[k] = now_ns() - t0;
        auto& result = s.outcome.extra[k];
        result.stats = integ.advance_to(t_end);
        result.outputs.resize(s.subsystem->output_size());
        integ.outputs(result.outputs);
      }
    } catch (const std::exception& e) {
      s.errors[task.run] = e.what();
    }
  };

  if (!pool_ || tasks.size() == 1) {
    for (const auto& task : tasks) run_task(task);
  } else {
    worker::parallel_runs(pool_->arena, tasks.size(), [&](std::size_t k) { run_task(tasks[k]); });
  }
  stepped_ = true;

  outcome.ok = true;
  outcome.error.clear();
  outcome.subsystems.resize(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    // Extra runs of one subsystem may run concurrently: sum their times after the loop.
    for (const auto& r : s.outcome.extra) s.outcome.extra_ns += r.stats.wall_ns;
    for (auto ns : s.restore_ns) s.snapshot_ns_total += ns;
    for (std::size_t r = 0; r < s.errors.size() && outcome.ok; ++r) {
      if (!s.errors[r].empty()) {
        // The lowest failing subsystem is reported, whatever the scheduling (contract 1).
        outcome.ok = false;
        outcome.failed_subsystem = i;
        outcome.error = (r == 0 ? "nominal run: " : "extra run: ") + s.errors[r];
      }
    }
    outcome.subsystems[i] = s.outcome;
  }
}

void InProcessExecutor::accept() {
  if (!stepped_) throw std::logic_error("InProcessExecutor::accept: no step to accept");
  for (auto& slot : slots_) {
    if (options_.rollback) {
      const auto t0 = now_ns();
      slot->nominal->save(*slot->snapshot);
      slot->snapshot_ns_total += now_ns() - t0;
    }
  }
  accepted_time_ = slots_.front()->nominal->time();
  stepped_ = false;
}

void InProcessExecutor::reject() {
  if (!stepped_) throw std::logic_error("InProcessExecutor::reject: no step to reject");
  if (!options_.rollback) {
    throw std::logic_error("InProcessExecutor::reject: rollback is disabled (fixed-step mode)");
  }
  for (auto& slot : slots_) {
    const auto t0 = now_ns();
    slot->nominal->restore(*slot->snapshot);
    slot->snapshot_ns_total += now_ns() - t0;
  }
  stepped_ = false;
}

double InProcessExecutor::accepted_time() const {
  return accepted_time_;
}

void InProcessExecutor::accepted_state(std::size_t i, std::span<double> z) const {
  if (stepped_) {
    throw std::logic_error("InProcessExecutor::accepted_state: call between steps");
  }
  const auto& integ = *slots_.at(i)->nominal;
  std::vector<double> zp(z.size());
  integ.state(z, zp);
}

ida::AdvanceStats InProcessExecutor::total_stats(std::size_t i) const {
  const Slot& s = *slots_.at(i);
  ida::AdvanceStats total = s.nominal->total_stats();
  for (const auto& e : s.extra) {
    if (e) total += e->total_stats();
  }
  return total;
}

std::int64_t InProcessExecutor::snapshot_ns(std::size_t i) const {
  return slots_.at(i)->snapshot_ns_total;
}

}  // namespace macrostep::executors
