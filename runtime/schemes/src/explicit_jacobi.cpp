// Explicit Jacobi scheme (METHODS.md §3.1, §5.1, §6.4; seed 000 §2.4.1, §3).
#include "macrostep/schemes/explicit_jacobi.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/coupling/builders.hpp"

namespace macrostep::schemes {

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

double ExplicitResult::mean_h() const {
  return steps.accepted > 0 ? end_time / static_cast<double>(steps.accepted) : 0.0;
}

bool needs_rollback(const ExplicitOptions& options) {
  return options.control.mode == control::StepSizeMode::kVariable ||
         control::comparison_runs(options.control.estimator) > 0;
}

ExplicitResult run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                            const ExplicitOptions& options, const AcceptedObserver& on_accepted,
                            const ProgressObserver& on_progress) {
  ExplicitResult result;
  run_explicit(system, executor, options, on_accepted, on_progress, result);
  return result;
}

void run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                  const ExplicitOptions& options, const AcceptedObserver& on_accepted,
                  const ProgressObserver& on_progress, ExplicitResult& result) {
  using control::Estimator;
  const Estimator estimator = options.control.estimator;
  if (estimator == Estimator::kImMD || estimator == Estimator::kImCV) {
    throw std::invalid_argument(fmt::format(
        "estimator {} belongs to the implicit scheme; the explicit scheme takes exLE, exMD, "
        "exCV (or none with a fixed step size)",
        control::estimator_name(estimator)));
  }
  if (options.control.mode == control::StepSizeMode::kVariable && estimator == Estimator::kNone) {
    throw std::invalid_argument(
        "a controlled step size needs an error estimator (exLE, exMD or exCV)");
  }
  if (system.subsystem_count() < 2 || system.coupling_count() == 0) {
    throw std::invalid_argument("co-simulation needs at least two coupled subsystems");
  }
  if (executor.subsystem_count() != system.subsystem_count()) {
    throw std::invalid_argument("executor and system have different subsystem counts");
  }
  if (options.least_squares && options.least_squares_points < 2) {
    throw std::invalid_argument("least-squares predictor needs at least 2 points");
  }
  const std::size_t ns = system.subsystem_count();
  const std::size_t nc = system.coupling_count();
  const auto t_run0 = now_ns();

  const std::vector<double> u0 = system.initial_couplings();
  control::MacroStepOptions copts = options.control;
  if (options.least_squares) {
    copts.history_capacity =
        std::max(copts.history_capacity, static_cast<std::size_t>(options.least_squares_points));
  }
  control::MacroStepController ctl(copts, u0);

  result = ExplicitResult{};
  result.subsystem_solver_ns.assign(ns, 0.0);
  // Statistics and the time breakdown up to the last attempt, also when the run stops with an
  // exception (a failed run's metadata still reports them).
  bool finalized = false;
  auto finalize = [&](double reached) {
    if (finalized) return;
    finalized = true;
    result.steps = ctl.statistics();
    result.end_time = reached;
    double solver = 0.0;
    std::int64_t snapshot = 0;
    result.subsystem_stats.clear();
    for (std::size_t i = 0; i < ns; ++i) {
      solver = std::max(solver, result.subsystem_solver_ns[i]);
      snapshot = std::max(snapshot, executor.snapshot_ns(i));
      result.subsystem_stats.push_back(executor.total_stats(i));
    }
    result.time.solver_ns = static_cast<std::int64_t>(solver);
    result.time.idle_ns -= result.time.solver_ns;  // Eq. 4.5
    result.time.snapshot_ns = snapshot;
    result.time.total_ns = now_ns() - t_run0;
  };
  try {
    std::vector<std::vector<std::size_t>> channels(ns);
    for (std::size_t i = 0; i < ns; ++i) {
      const auto in = system.input_couplings(i);
      channels[i].assign(in.begin(), in.end());
    }

    // Initial point.
    std::vector<std::vector<double>> outputs(ns), extra_outputs(ns);
    {
      std::vector<double> z;
      for (std::size_t i = 0; i < ns; ++i) {
        const auto& s = system.subsystem(i);
        z.resize(s.state_size());
        std::vector<double> zp(s.state_size()), u(s.input_size());
        system.gather_inputs(i, u0, u);
        s.initial_state(u, z, zp);
        outputs[i].resize(s.output_size());
        s.outputs(s.initial_time(), z, u, outputs[i]);
      }
      const auto t0 = now_ns();
      on_accepted(AcceptedPoint{0, options.control.t_start, 0, 0.0, outputs, u0});
      result.time.observer_ns += now_ns() - t0;
    }

    std::vector<executors::SubsystemCommand> commands(ns);
    executors::PassOutcome outcome;
    std::vector<double> u_pre(nc), u_hat(nc), u_new(nc);
    // Monitored outputs of the nominal and of the comparison run (concept 1, METHODS §5).
    std::vector<double> monitored(system.monitored_outputs().size()), monitored_hat(monitored);
    std::vector<std::size_t> sel;
    int consecutive_failures = 0;

    while (!ctl.finished()) {
      const control::StepPlan plan = ctl.plan();
      const auto& hist = ctl.history();
      const int kappa = plan.kappa;
      const double t1 = plan.t_end;
      auto t_if = now_ns();

      // 1-2. Predictor and step polynomials (METHODS §2.2 table).
      if (options.least_squares && static_cast<int>(hist.size()) >= options.least_squares_points &&
          options.least_squares_points > kappa + 1) {
        coupling::least_squares_prediction(hist, kappa, options.least_squares_points, t1, u_pre);
      } else {
        coupling::lagrange_prediction(hist, kappa, t1, u_pre);
      }
      const Estimator effective = plan.estimator;
      if (effective == Estimator::kExMD) {
        coupling::milne_comparison_prediction(hist, kappa, t1, u_hat);
      }
      for (std::size_t i = 0; i < ns; ++i) {
        sel.assign(channels[i].begin(), channels[i].end());
        auto& cmd = commands[i];
        cmd.nominal = coupling::step_polynomial(hist, kappa, t1, u_pre, sel);
        cmd.extra.clear();
        if (effective == Estimator::kExMD) {
          cmd.extra.push_back(
              runner::ExtraRun::comparison(coupling::step_polynomial(hist, kappa, t1, u_hat, sel)));
        } else if (effective == Estimator::kExLE) {
          cmd.extra.push_back(runner::ExtraRun::comparison(
              coupling::extrapolation_comparison_polynomial(hist, kappa, t1, sel)));
        }
      }
      result.time.interface_ns += now_ns() - t_if;

      // Step 3 of §3.1: the runs.
      const auto t_ex = now_ns();
      executor.step(t1, commands, outcome);
      result.time.executor_ns += now_ns() - t_ex;
      result.time.communication_ns += outcome.communication_ns;
      std::int64_t slowest = 0;
      for (std::size_t i = 0; i < ns; ++i) {
        const auto& so = outcome.subsystems[i];
        result.subsystem_solver_ns[i] += static_cast<double>(so.solver_ns);
        slowest = std::max(slowest, so.solver_ns);
        result.time.extra_runs_ns += so.extra_ns;
      }
      result.time.idle_ns += slowest;  // Σ_N max_L T_{L,N}; the solver part is removed below

      if (!outcome.ok) {
        const std::string what =
            fmt::format("subsystem {} failed in the macro step [{:.9g}, {:.9g}]: {}",
                        outcome.failed_subsystem + 1, plan.t_begin, t1, outcome.error);
        if (options.control.mode == control::StepSizeMode::kFixed ||
            ++consecutive_failures > options.max_consecutive_failures) {
          throw SubsystemFailure(what, outcome.failed_subsystem, plan.t_begin);
        }
        executor.reject();
        control::StepOutcome failed;
        failed.subsystem_failed = true;  // D-26: a failure with r = 0.25, counted apart
        ctl.complete(failed);
        if (on_progress) on_progress(plan, false);
        continue;
      }

      t_if = now_ns();
      for (std::size_t i = 0; i < ns; ++i) outputs[i] = outcome.subsystems[i].nominal.outputs;
      system.evaluate_couplings(outputs, u_new);  // u_{N+1} = phi(y_{N+1}) (Eq. 2.25)

      control::StepOutcome so;
      so.u_next = u_new;
      if (effective == Estimator::kExCV) {
        so.estimate =
            control::estimate_coupling_variables(u_pre, u_new, options.control.tolerances);
      } else if (effective == Estimator::kExMD || effective == Estimator::kExLE) {
        for (std::size_t i = 0; i < ns; ++i)
          extra_outputs[i] = outcome.subsystems[i].extra[0].outputs;
        system.gather_monitored(outputs, monitored);
        system.gather_monitored(extra_outputs, monitored_hat);
        const control::MilneRatios ratios = effective == Estimator::kExMD
                                                ? control::milne_ratios(hist, kappa, t1)
                                                : control::MilneRatios{};
        so.estimate =
            control::estimate_states(effective, monitored, monitored_hat, system.monitored_groups(),
                                     ratios, options.control.tolerances);
      }
      const control::StepVerdict verdict = ctl.complete(so);
      result.time.interface_ns += now_ns() - t_if;

      if (verdict.accepted) {
        consecutive_failures = 0;
        executor.accept();
        const auto t_obs = now_ns();
        on_accepted(AcceptedPoint{ctl.statistics().accepted, t1, kappa, plan.h(), outputs, u_new});
        result.time.observer_ns += now_ns() - t_obs;
      } else {
        executor.reject();
      }
      if (on_progress) on_progress(plan, verdict.accepted);
    }

  } catch (...) {
    finalize(ctl.history().newest_time());
    throw;
  }
  finalize(options.control.t_end);
}

}  // namespace macrostep::schemes
