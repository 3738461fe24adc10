// A deterministic driver for the exported-controller tests, shared by test_control and by the
// process that continues an exported controller (controller_state_child.cpp). Outcomes are a
// pure function of the plan, so two controllers in the same state that are driven alike stay
// alike; the driver injects error-test rejections and corrector failures on a fixed pattern
// of attempt ids, so that every branch of complete() is taken.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "macrostep/control/macro_step_controller.hpp"

namespace macrostep::test {

inline constexpr std::size_t kDriverChannels = 2;

// kind "variable": exCV with start-up phase; "fixed": exH with the Listing 5.1 ramp.
inline control::MacroStepOptions driver_options(const std::string& kind) {
  control::MacroStepOptions o;
  o.t_end = 1.0;
  o.tolerances.atol_u_each = {0.5, 0.25};
  if (kind == "fixed") {
    o.mode = control::StepSizeMode::kFixed;
    o.estimator = control::Estimator::kNone;
    o.h = 0.05;
    o.kappa_fixed = 3;
  } else {
    o.mode = control::StepSizeMode::kVariable;
    o.estimator = control::Estimator::kExCV;
    o.h = 1e-3;
  }
  return o;
}

inline std::vector<double> driver_u(double t) {
  return {1.5 + std::sin(40.0 * t), std::exp(-3.0 * t) * std::cos(25.0 * t)};
}

// Completes the current attempt with the driver's outcome and appends the plan and the verdict
// bit for bit to `record`.
inline void drive_one(control::MacroStepController& c, std::vector<std::uint64_t>& record) {
  const control::StepPlan p = c.plan();
  const std::vector<double> u = driver_u(p.t_end);
  control::StepOutcome outcome;
  outcome.u_next = u;
  if (c.options().mode == control::StepSizeMode::kVariable) {
    const double h = p.h();
    double norm = 0.5 * std::pow(h / 0.02, p.kappa + 1) * (1.0 + 0.3 * std::sin(17.0 * p.t_end));
    if (p.attempt % 11 == 6) norm = 2.5;  // an error-test failure
    outcome.estimate = control::ErrorEstimate::coupling_variables(norm);
    outcome.corrector_failed = p.attempt % 23 == 15;
  }
  const control::StepVerdict v = c.complete(outcome);
  record.insert(
      record.end(),
      {p.attempt, p.step, static_cast<std::uint64_t>(p.repeat),
       std::bit_cast<std::uint64_t>(p.t_begin), std::bit_cast<std::uint64_t>(p.t_end),
       static_cast<std::uint64_t>(p.kappa), static_cast<std::uint64_t>(p.estimator), v.accepted,
       v.finished, std::bit_cast<std::uint64_t>(v.error_norm), std::bit_cast<std::uint64_t>(v.r),
       static_cast<std::uint64_t>(v.kappa_next), static_cast<std::uint64_t>(v.source)});
}

// Drives up to `attempts` attempts (stops when finished); returns the record.
inline std::vector<std::uint64_t> drive(control::MacroStepController& c, int attempts) {
  std::vector<std::uint64_t> record;
  for (int i = 0; i < attempts && !c.finished(); ++i) drive_one(c, record);
  return record;
}

}  // namespace macrostep::test
