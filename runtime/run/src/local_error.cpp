// The local error of one macro step from the exact history (local_error.hpp; METHODS §7.6).
#include "macrostep/run/local_error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "exact_history.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "macrostep/system/restarted_system.hpp"

namespace macrostep::run {

namespace {

using Matrix = std::vector<std::vector<double>>;

// What the step ended with at T + H.
struct StepEnd {
  Matrix z;               // every subsystem's state (the executor's accepted state)
  Matrix y;               // the outputs as the subsystems' nominal runs returned them
  std::vector<double> u;  // u_{N+1} after the consistent update
};

// The executor of the step: the in-process one, IDA at the mode's tolerance, restarted at T.
executors::ExecutorOptions step_executor(const CosimSettings& settings, double tolerance) {
  executors::ExecutorOptions o = settings.executor;
  o.solver.rtol = tolerance;
  o.solver.atol_pos = 1e-3 * tolerance;
  o.solver.atol_vel = tolerance;
  o.subsystem_solvers.clear();
  o.rollback = true;  // Gauss–Seidel passes more than once
  o.jumps = runner::JumpOptions{runner::JumpPolicy::kRestart, 0};
  o.threads = 1;
  o.output_interval = 0.0;
  return o;
}

// One macro step T → T + H of the scheme from the exact history (steps 2 and 3 of the header).
StepEnd one_step(const system::CoupledSystem& base, schemes::SchemeOptions options,
                 const executors::ExecutorOptions& executor_options, const ExactHistory& exact,
                 double t, double h, int samples) {
  const std::size_t ns = base.subsystem_count();
  const ExactPoint now = exact.at(t);
  const system::CoupledSystem system = system::restarted_system(base, t, now.z);
  options.control.t_start = t;
  options.control.t_end = t + h;
  options.control.h = h;
  executors::InProcessExecutor executor(system, now.u, executor_options);
  const std::unique_ptr<schemes::MacroStepScheme> scheme = schemes::make_scheme(options);
  scheme->start(system, options);

  polynomials::CouplingHistory history(system.coupling_count(), static_cast<std::size_t>(samples));
  std::vector<double> times;
  std::vector<Matrix> outputs;
  for (int j = samples - 1; j >= 0; --j) {
    const ExactPoint p = exact.at(past_time(t, h, j));
    history.push(past_time(t, h, j), p.u);
    times.push_back(past_time(t, h, j));
    outputs.push_back(p.y);
  }
  scheme->assume_exact_past(times, outputs);

  schemes::SchemeResult statistics;
  statistics.subsystem_solver_ns.assign(ns, 0.0);
  schemes::PassRunner runner(executor, statistics, system);
  runner.begin_attempt();
  control::StepPlan plan;
  plan.t_begin = t;
  plan.t_end = t + h;
  plan.kappa = options.control.kappa_fixed;
  plan.estimator = control::Estimator::kNone;
  const schemes::AttemptResult a = scheme->attempt(plan, history, runner);
  if (a.subsystem_failed || a.corrector_failed) {
    throw std::runtime_error(
        fmt::format("the step from T = {:g} s with H = {:g} s failed: {}", t, h,
                    a.subsystem_failed ? a.error : "the Gauss-Seidel repetitions did not settle"));
  }
  StepEnd end;
  end.u = runner.u_next();
  for (const auto& s : runner.last_pass().subsystems) end.y.push_back(s.nominal.outputs);
  executor.accept();
  for (std::size_t i = 0; i < ns; ++i) {
    end.z.emplace_back(system.subsystem(i).state_size());
    executor.accepted_state(i, end.z.back());
  }
  return end;
}

// |a − b| / scale, absolute where the scale is 0.
double relative_error(double a, double b, double scale) {
  const double e = std::abs(a - b);
  return scale > 0.0 ? e / scale : e;
}

// The group's least-squares slope of log(error) over log(H) over the errors of at least
// `resolution` (their count in g.fitted); NaN with fewer than two, or an error not finite.
void fit_group(const std::vector<double>& h, double resolution, LocalErrorGroup& g) {
  std::vector<double> x, y;
  for (std::size_t k = 0; k < h.size(); ++k) {
    if (!std::isfinite(g.errors[k])) {
      x.clear();
      break;
    }
    if (g.errors[k] >= resolution) {
      x.push_back(std::log(h[k]));
      y.push_back(std::log(g.errors[k]));
    }
  }
  g.fitted = x.size();
  g.slope = std::numeric_limits<double>::quiet_NaN();
  if (x.size() < 2) return;
  const auto n = static_cast<double>(x.size());
  double mx = 0.0, my = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    mx += x[k] / n;
    my += y[k] / n;
  }
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    sxy += (x[k] - mx) * (y[k] - my);
    sxx += (x[k] - mx) * (x[k] - mx);
  }
  g.slope = sxy / sxx;
}

// The groups' errors of one step against the reference at T + H (step 4 of the header), as one
// more entry of every group's errors; `worst` names the largest of each group.
void add_errors(const ExactHistory& exact, const StepEnd& end, const ExactPoint& ref, double t,
                std::vector<LocalErrorGroup>& groups) {
  for (const ErrorVariable& v : exact.variables()) {
    double ours = 0.0, theirs = 0.0;
    switch (v.kind) {
      case ErrorVariable::Kind::kState:
        ours = end.z[v.subsystem][v.index];
        theirs = ref.z[v.subsystem][v.index];
        break;
      case ErrorVariable::Kind::kOutput:
        ours = end.y[v.subsystem][v.index];
        theirs = ref.y[v.subsystem][v.index];
        break;
      case ErrorVariable::Kind::kCoupling:
        ours = end.u[v.index];
        theirs = ref.u[v.index];
        break;
    }
    LocalErrorGroup& g = groups[v.group];  // its last entry is this step's (−1 until set)
    const double e = relative_error(ours, theirs, v.scale);
    if (!(e <= g.errors.back())) {
      g.errors.back() = e;
      g.worst = fmt::format("{} (T = {:g} s)", v.name, t);
    }
  }
}

}  // namespace

LocalErrorResult local_error(const config::RunConfig& config, const LocalErrorOptions& options) {
  LocalErrorSetup setup = local_error_setup(config, options);
  const ExactHistory exact(config, *setup.system, options, setup.samples);

  LocalErrorResult result;
  result.config_path = config.path;
  result.scheme = config::to_string(setup.settings.cosim.scheme);
  result.approximation = setup.approximation;
  result.order = setup.options.control.kappa_fixed;
  result.past_samples = setup.samples;
  result.at = options.at;
  result.tolerance = options.tolerance;
  result.step_sizes = options.step_sizes;
  std::vector<LocalErrorGroup> groups(kErrorGroups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) groups[g].name = kErrorGroups[g];

  const executors::ExecutorOptions executor = step_executor(setup.settings, options.tolerance);
  for (const double h : options.step_sizes) {
    for (LocalErrorGroup& g : groups) g.errors.push_back(-1.0);
    for (const double t : options.at) {
      const StepEnd end =
          one_step(*setup.system, setup.options, executor, exact, t, h, setup.samples);
      add_errors(exact, end, exact.at(t + h), t, groups);
    }
  }
  result.step_order = std::numeric_limits<double>::quiet_NaN();
  const double resolution = kLocalErrorResolution * options.tolerance;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].errors.empty() || groups[g].errors.front() < 0.0) continue;  // no variables
    fit_group(options.step_sizes, resolution, groups[g]);
    const double s = groups[g].slope;
    if (g != kCouplingGroup && !std::isnan(s) && !(s >= result.step_order)) result.step_order = s;
    result.groups.push_back(groups[g]);
  }
  return result;
}

void print_local_error(std::ostream& out, const LocalErrorResult& r) {
  out << fmt::format(
      "local error of one macro step from the exact history: {}\n"
      "scheme {}, approximation {}, order {}, from T = {} s (the largest error over them); {} "
      "past samples T - {}H .. T and the states at T from the reference; reference and step: "
      "IDA rtol {:g}\n",
      r.config_path, r.scheme, r.approximation, r.order, fmt::join(r.at, ", "), r.past_samples,
      r.past_samples - 1, r.tolerance);
  out << fmt::format("{:>10}", "H [s]");
  for (const auto& g : r.groups) out << fmt::format(" {:>13}", g.name);
  out << "\n";
  for (std::size_t k = 0; k < r.step_sizes.size(); ++k) {
    out << fmt::format("{:>10.3e}", r.step_sizes[k]);
    for (const auto& g : r.groups) out << fmt::format(" {:>13.3e}", g.errors[k]);
    out << "\n";
  }
  out << "largest relative error at the last H in:";
  for (const auto& g : r.groups) out << fmt::format(" {} {};", g.name, g.worst);
  out << "\nslope (least squares, log-log):";
  for (std::size_t k = 0; k < r.groups.size(); ++k)
    out << fmt::format("{} {} {:.2f}", k == 0 ? "" : ",", r.groups[k].name, r.groups[k].slope);
  for (const auto& g : r.groups) {
    if (g.fitted < r.step_sizes.size()) {
      out << fmt::format(
          "\n{}: {} of {} errors above the resolution {:g} (10 x the tolerance) "
          "fitted",
          g.name, g.fitted, r.step_sizes.size(), kLocalErrorResolution * r.tolerance);
    }
  }
  out << fmt::format(
      "\norder of the step's error (lowest slope of the states and outputs, seed 001 Eq. 26): "
      "{:.2f}\n",
      r.step_order);
}

}  // namespace macrostep::run
