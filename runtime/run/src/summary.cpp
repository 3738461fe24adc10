// The summary of a co-simulation run on the terminal (cosimulation.hpp print_summary).
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "elapsed.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/schemes/adaptive.hpp"
#include "macrostep/system/system_description.hpp"
#include "run_metadata.hpp"

namespace macrostep::run {

namespace {

// "process executor (worker processes as placed below, ...)" or "in-process executor, ..."
// with the threads that run a step's nominal and extra runs (the placement lines name the
// processes and the subsystems each hosts).
std::string executor_description(const CosimSettings& s) {
  const int n = s.executor.threads;
  const std::string threads = fmt::format("{} thread{}", n, n == 1 ? "" : "s");
  if (s.cosim.executor == config::ExecutorKind::kProcesses) {
    return fmt::format("process executor (worker processes as placed below, {} each)",
                       n == 0 ? std::string("threads on all its PUs") : threads);
  }
  if (s.cosim.executor == config::ExecutorKind::kMpi) {
    return fmt::format("MPI bridge (node agents drive one process per subsystem, {} each)",
                       n == 0 ? std::string("threads on all its PUs") : threads);
  }
  return fmt::format("in-process executor, {}", n == 0 ? std::string("all cores") : threads);
}

// The estimator as the setup line names it: auto's in both forms ("exMD/imMD").
std::string estimator_text(const config::CosimConfig& c) {
  const control::Estimator e = c.estimator;
  if (c.scheme != config::CosimScheme::kAuto) return control::to_string(e);
  using control::Estimator;
  const bool states = control::monitors_states(e);
  return states ? (e == Estimator::kExLE ? "exLE/imMD" : "exMD/imMD") : "exCV/imCV";
}

// "scheme: implicit, fd Jacobian, tau 0.33, ..." (iterative schemes).
void print_iterative_scheme(std::ostream& out, const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const std::string how = c.scheme == config::CosimScheme::kWaveform
                              ? fmt::format("omega {}", c.omega)
                              : fmt::format("{} Jacobian", c.jacobian);
  const std::string step =
      c.fixed_step()
          ? fmt::format("fixed H = {} s, kappa = {}", m.h, m.kappa_fixed)
          : fmt::format("{} estimator, {}, Gamma {}", estimator_text(c),
                        c.effective_order().automatic
                            ? fmt::format("order control (kappa <= {})", m.order.kappa_max)
                            : fmt::format("fixed kappa = {}", c.effective_order().kappa),
                        m.step.safety);
  fmt::print(out,
             "scheme: {}, {}, tau {}, at most {} corrector passes{}, perturbation_min {}; {}; "
             "rtol {:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, atol_u {:.3g}\n",
             c.scheme == config::CosimScheme::kAuto
                 ? "auto (explicit, semi-implicit or implicit steps, whichever costs least)"
                 : config::to_string(c.scheme),
             how, c.tau, c.max_corrector_passes,
             c.final_pass.value() ? "" : " (no pass after convergence, D-50)", c.perturbation_min,
             step, m.tolerances.rtol, m.tolerances.atol_pos, m.tolerances.atol_vel,
             m.tolerances.atol_u);
}

// What runs: the model, the scheme, the subsystems' solvers, the approximation and jumps.
void print_setup(std::ostream& out, const config::RunConfig& config, const CosimSettings& s) {
  const config::CosimConfig& c = s.cosim;
  const control::MacroStepOptions& m = s.scheme.control;
  const std::size_t ns = config::subsystem_count(config);
  const system::SystemDescription& d = *config.system_description;
  if (const auto& chain = d.chain) {
    fmt::print(out, "co-simulation of {}: chain of {} masses in {} subsystems, t = 0 .. {} s\n",
               config.path, chain->masses(), ns, s.end_time);
  } else {
    std::vector<std::string> names;
    for (const auto& sub : d.subsystems) names.push_back(sub.name);
    fmt::print(out, "co-simulation of {}: {} subsystems ({}), t = 0 .. {} s\n", config.path, ns,
               fmt::join(names, ", "), s.end_time);
  }
  if (c.iterative()) {
    print_iterative_scheme(out, s);
  } else if (const auto& gs = s.scheme.gauss_seidel) {
    std::vector<std::size_t> sequence;
    for (std::size_t i = 0; i < ns; ++i)
      sequence.push_back(gs->sequence.empty() ? i + 1 : gs->sequence[i] + 1);
    fmt::print(out,
               "scheme: Gauss-Seidel, subsystems in the order {}, {} end values, fixed H = {} s, "
               "kappa = {}, {} predictor (METHODS §3.2)\n",
               fmt::join(sequence, ", "), config::to_string(c.gauss_seidel), m.h, m.kappa_fixed,
               config::to_string(c.predictor));
  } else if (c.fixed_step()) {
    fmt::print(out, "scheme: explicit Jacobi, fixed H = {} s (exH), kappa = {}, {} predictor\n",
               m.h, m.kappa_fixed, config::to_string(c.predictor));
  } else {
    const config::OrderSetting order = c.effective_order();
    fmt::print(out,
               "scheme: explicit Jacobi, {} estimator, {}, rtol {:.3g}, atol_pos {:.3g}, atol_vel "
               "{:.3g}, atol_u {:.3g}, Gamma {}, {} predictor\n",
               control::to_string(c.estimator),
               order.automatic
                   ? fmt::format("order control ({}, kappa <= {})",
                                 control::to_string(c.order_strategy), m.order.kappa_max)
                   : fmt::format("fixed kappa = {}", order.kappa),
               m.tolerances.rtol, m.tolerances.atol_pos, m.tolerances.atol_vel, m.tolerances.atol_u,
               m.step.safety, config::to_string(c.predictor));
  }
  fmt::print(out, "subsystems: IDA, rtol {:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, {}; {}\n",
             s.executor.solver.rtol, s.executor.solver.atol_pos, s.executor.solver.atol_vel,
             s.executor.solver.linear_solver == ida::LinearSolver::kDense ? "dense LU" : "KLU",
             executor_description(s));
  for (std::size_t i = 0; i < s.executor.subsystem_solvers.size(); ++i) {
    if (config.subsystem_solvers[i].empty()) continue;
    const ida::IntegratorOptions& o = s.executor.subsystem_solvers[i];
    fmt::print(out,
               "  {}: own IDA settings, rtol {:.3g}, atol_pos {:.3g}, atol_vel {:.3g}, {}, "
               "max order {}\n",
               d.subsystems[i].name, o.rtol, o.atol_pos, o.atol_vel,
               o.linear_solver == ida::LinearSolver::kDense ? "dense LU" : "KLU", o.max_order);
  }
  const bool per_connection =
      std::any_of(s.connection_approximations.begin(), s.connection_approximations.end(),
                  [](const std::string& a) { return !a.empty(); });
  if (!c.approximation.is_lagrange() || per_connection) {
    fmt::print(out, "approximation: {}{}\n", c.approximation.name,
               per_connection ? " (some connections name their own)" : "");
  }
  const int floor = c.min_micro_steps.value_or(0);
  fmt::print(out, "input jumps at macro points: {} history{}\n",
             runner::to_string(c.jump_handling.value_or(runner::JumpPolicy::kKeep)),
             floor > 0 ? fmt::format(", micro steps <= H/{}", floor) : std::string());
}

// Scheme auto: steps per scheme, and the last switches with their reasons.
void print_scheme_choice(std::ostream& out, const schemes::SchemeChoiceStatistics& c) {
  const auto per = [](const char* name, const schemes::SchemeChoiceStatistics::PerScheme& p) {
    return fmt::format("{} {} steps ({} rejected) over {:.4g} s, work {:.4g}", name, p.accepted,
                       p.attempts - p.accepted, p.time, p.work);
  };
  fmt::print(out, "scheme choice: {}; {}; {}; {} switches, {} probes skipped\n",
             per("explicit", c.explicit_steps), per("semi-implicit", c.semi_implicit_steps),
             per("implicit", c.implicit_steps), c.switches, c.skipped_probes);
  if (c.escalated > 0) {
    fmt::print(out,
               "  {} semi-implicit steps repeated as implicit ones: their corrector pass left a "
               "coupling mismatch above {} times the tolerance\n",
               c.escalated, schemes::AdaptiveScheme::kEscalationLimit);
  }
  if (!c.only_reason.empty()) fmt::print(out, "  {}\n", c.only_reason);
  constexpr std::size_t kShown = 6;
  const std::size_t first = c.recent.size() > kShown ? c.recent.size() - kShown : 0;
  if (first > 0) fmt::print(out, "  ... ({} earlier switches in the metadata)\n", first);
  for (std::size_t k = first; k < c.recent.size(); ++k) {
    fmt::print(out, "  t = {:.6g} s: {}\n", c.recent[k].time, c.recent[k].reason);
  }
}

// One warning per absolute tolerance and unit whose quantities all swing within ten times it
// (tolerance_check.hpp, which lists each class's quantities together): the first three of them,
// and the largest tolerance that could see them (how far below it the results settle depends on
// how strongly other quantities amplify these ones' errors: F-2.8's node pressure needs 1e-14 m³
// where this bound says 6e-11).
void print_tolerance_warnings(std::ostream& out, const CosimResult& r) {
  const auto& found = r.tolerance_above_swing;
  for (std::size_t j = 0; j < found.size();) {
    const ToleranceAboveSwing& f = found[j];
    std::string names;
    double smallest = f.swing;
    std::size_t k = j;
    for (; k < found.size() && found[k].key == f.key && found[k].unit == f.unit; ++k) {
      if (k - j < 3)
        names += fmt::format("{}{} {:.3g}", k == j ? "" : ", ", found[k].name, found[k].swing);
      smallest = std::min(smallest, found[k].swing);
    }
    fmt::print(out,
               "warning: {} = {:.3g} is a tenth or more of the largest swing of its quantities "
               "{} over t = {:.6g} to {:.6g} s ({}{}): the error estimates cannot see their "
               "errors, and the run may drift far off with no failed step. Give a tolerance in "
               "their units, at most rtol times their smallest swing (--set cosim.{}={:.1g}), and "
               "lower it until the results no longer change\n",
               f.key, f.atol, f.unit.empty() ? "without a unit" : "in " + f.unit, f.from, f.to,
               names, k - j > 3 ? ", ..." : "", f.key,
               r.settings.scheme.control.tolerances.rtol * smallest);
    j = k;
  }
}

// Gauss–Seidel's repetitions: how many, how far converged, and a warning when some step stopped
// before its repetitions converged (gauss_seidel.hpp).
void print_gauss_seidel(std::ostream& out, const CosimResult& r) {
  const schemes::CorrectorStatistics& k = r.run.corrector;
  const schemes::GaussSeidelOptions& gs = *r.settings.scheme.gauss_seidel;
  if (gs.end_value == schemes::GaussSeidelEndValue::kSequential) {
    fmt::print(out,
               "gauss-seidel: sequential end values, {} passes after the Jacobi ones in {} steps "
               "(one per later subsystem, nothing repeated)\n",
               k.passes, k.attempts);
    return;
  }
  fmt::print(out,
             "gauss-seidel: {} repetitions in {} steps (mean {:.2f}, max {}); largest remaining "
             "change {:.3g} of the coupling weights (converged: <= {:g}); {} steps not converged\n",
             k.passes, k.attempts, k.mean_passes(), k.max_passes, k.max_iteration_residual,
             gs.tolerance, r.run.steps.corrector_failures);
  if (r.run.steps.corrector_failures > 0) {
    fmt::print(out,
               "warning: in {} steps the repetitions stopped before converging (on the limit of "
               "{} or when they no longer contracted), leaving up to {:.3g} times the coupling "
               "weights; a smaller step size converges faster, the implicit scheme does not "
               "repeat\n",
               r.run.steps.corrector_failures, gs.max_passes, k.max_iteration_residual);
  }
}

// The macro steps: counts, sizes and the order histogram.
void print_steps(std::ostream& out, const CosimResult& r) {
  const control::MacroStepStatistics& st = r.run.steps;
  fmt::print(out,
             "macro steps {} accepted, {} rejected (failed-step ratio {:.2f} %), mean H {:.4g} s, "
             "H {:.4g} .. {:.4g} s\n",
             st.accepted, st.rejected,
             st.accepted > 0
                 ? 100.0 * static_cast<double>(st.rejected) / static_cast<double>(st.accepted)
                 : 0.0,
             r.run.mean_h(), st.h_min, st.h_max);
  std::string histogram;
  for (int k = 0; k <= control::kMaxKappa; ++k) {
    const auto n = st.accepted_by_kappa[static_cast<std::size_t>(k)];
    if (n == 0) continue;
    histogram += fmt::format(
        "{}kappa {}: {:.1f} % of steps, {:.1f} % of time", histogram.empty() ? "" : "; ", k,
        100.0 * static_cast<double>(n) / static_cast<double>(st.accepted),
        100.0 * r.time_by_kappa[static_cast<std::size_t>(k)] / r.settings.end_time);
  }
  fmt::print(out, "order histogram: {}\n", histogram.empty() ? "-" : histogram);
}

// The corrector of the iterative schemes (Gauss–Seidel's repetitions apart).
void print_corrector(std::ostream& out, const CosimResult& r) {
  const CosimSettings& s = r.settings;
  const control::MacroStepStatistics& st = r.run.steps;
  const schemes::TimeBreakdown& t = r.run.time;
  if (r.run.corrector.attempts > 0 && s.scheme.gauss_seidel) {
    print_gauss_seidel(out, r);
  } else if (r.run.corrector.attempts > 0) {
    const schemes::CorrectorStatistics& k = r.run.corrector;
    fmt::print(out,
               "corrector: {} passes after {} predictors (mean {:.2f}, max {}), {} interface "
               "Jacobians, {} convergence failures; perturbed runs {:.3f} s vs nominal runs "
               "{:.3f} s (summed over subsystems)\n",
               k.passes, k.attempts, k.mean_passes(), k.max_passes, k.jacobian_evaluations,
               st.corrector_failures, seconds(t.extra_runs_ns), 1e-9 * nominal_ns(r.run));
    // Semi-implicit steps: what their one corrector pass left (auto's rule for implicit steps).
    if (k.max_iteration_residual > 0.0) {
      fmt::print(out,
                 "semi-implicit steps: largest coupling mismatch left by the corrector pass "
                 "{:.3g} of the weights (tau {})\n",
                 k.max_iteration_residual, s.cosim.tau);
    }
    // Scheme auto repeats such steps as implicit ones; the fixed scheme keeps them.
    if (k.max_iteration_residual > schemes::AdaptiveScheme::kEscalationLimit) {
      fmt::print(out,
                 "warning: a semi-implicit step left its coupling variables {:.3g} times their "
                 "tolerance off the coupling's fixed point, which no error estimate sees: the "
                 "result may be wrong there (the steps file's coupling_mismatch shows where); "
                 "scheme implicit or auto iterates such steps\n",
                 k.max_iteration_residual);
    }
  }
}

}  // namespace

void print_summary(std::ostream& out, const config::RunConfig& config, const CosimResult& r) {
  const CosimSettings& s = r.settings;
  const std::size_t ns = config::subsystem_count(config);
  print_setup(out, config, s);
  if (!r.terminated.empty()) fmt::print(out, "{}\n", r.terminated);

  const std::size_t nc = r.coupling_count;
  const std::size_t first_u = r.columns.size() - nc;
  fmt::print(out, "coupling variables at t = {} s:\n", r.final_time);
  const std::size_t shown = std::min<std::size_t>(nc, 8);
  for (std::size_t j = 0; j < shown; ++j) {
    fmt::print(out, "  {:>10} = {:.10g}\n", r.columns[first_u + j], r.final_values[first_u + j]);
  }
  if (shown < nc) fmt::print(out, "  ... ({} more)\n", nc - shown);

  print_steps(out, r);
  const schemes::TimeBreakdown& t = r.run.time;
  print_corrector(out, r);
  if (r.run.steps.accepted > 0) {
    const double per_step = static_cast<double>(r.run.steps.accepted) * static_cast<double>(ns);
    fmt::print(out,
               "integrations per subsystem and accepted step: {:.2f} (nominal runs {:.2f}, "
               "comparison and perturbed runs {:.2f})\n",
               integrations_per_step(r.run),
               static_cast<double>(r.run.integrations.nominal) / per_step,
               static_cast<double>(r.run.integrations.extra) / per_step);
  }
  if (r.run.scheme_choice.used) print_scheme_choice(out, r.run.scheme_choice);
  if (r.run.estimate_raises.attempts > 0) {
    fmt::print(out,
               "{} explicit estimates raised (up to {:.3g}x): the coupling variables landed more "
               "than {:g} times farther from the prediction than the comparison assumed (an "
               "event inside a subsystem, D-52)\n",
               r.run.estimate_raises.attempts, r.run.estimate_raises.max_factor,
               s.scheme.prediction_ratio_limit);
  }
  if (r.run.estimate_raises.unseen > 0) {
    fmt::print(out,
               "{} explicit estimate{} of 0 (the first from t = {:.6g} s) where the coupling "
               "variables missed their prediction by more than their tolerance: judged by that "
               "miss instead (a change after a stretch of equal values, which the comparison "
               "cannot see, D-52)\n",
               r.run.estimate_raises.unseen, r.run.estimate_raises.unseen == 1 ? "" : "s",
               r.run.estimate_raises.first_unseen);
  }
  if (r.run.consistent_update.output_evaluations > 0) {
    const schemes::ConsistentUpdateStatistics& c = r.run.consistent_update;
    fmt::print(out,
               "consistent update (D-1): {} Newton steps, {} output evaluations ({} subsystem "
               "evaluations)\n",
               c.newton_iterations, c.output_evaluations, c.subsystem_evaluations);
  }
  std::string micro;
  for (std::size_t i = 0; i < ns; ++i) {
    micro += fmt::format("{}{}", i == 0 ? "" : ", ", r.run.subsystem_stats[i].steps);
  }
  fmt::print(out, "micro steps per subsystem: {}\n", micro);
  // Seed 000 §4.4: solver = max_L sum_N T_LN, idle = sum_N max_L T_LN - solver (Eq. 4.5).
  fmt::print(out, "time [s]  {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8}\n", "solver", "idle",
             "extra runs", "interface", "snapshot", "output", "total", "wall");
  fmt::print(
      out, "          {:>8.3f} {:>8.3f} {:>10.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}\n",
      seconds(t.solver_ns), seconds(t.idle_ns), seconds(t.extra_runs_ns), seconds(t.interface_ns),
      seconds(t.snapshot_ns), seconds(t.observer_ns), seconds(t.total_ns), seconds(r.wall_ns));
  if (r.settings.cosim.executor != config::ExecutorKind::kInProcess) {
    fmt::print(out,
               "communication [s]: {:.3f} (send to reply minus worker time, slowest subsystem)\n",
               seconds(t.communication_ns));
  }
  fmt::print(out, "wrote {} ({} rows x {} columns + time){}\n", r.csv_path, r.rows,
             r.columns.size(), r.json_path.empty() ? std::string() : " and " + r.json_path);
  if (r.steps_path.empty()) {
    // A character device took the result alone.
  } else if (r.steps_path != r.csv_path) {
    fmt::print(out, "per-attempt diagnostics: {}\n", r.steps_path);
  } else {
    fmt::print(out, "per-attempt diagnostics: {} /steps\n", r.steps_path);
  }
  if (!r.placement.empty()) fmt::print(out, "{}", r.placement);
  print_tolerance_warnings(out, r);
}

}  // namespace macrostep::run
