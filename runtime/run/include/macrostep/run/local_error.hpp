// The local error of one macro step started from the exact history (`macrostep local-error`;
// METHODS §7.6; seed 001 Eq. 26; seed 003 §2.3.1): how the co-simulation error of a single step
// falls with H when nothing before the step is in error.
//
// For every H of the list and every start time T of the list:
//  1. A tight monolithic reference run of the configuration (run_monolithic with every state,
//     at the IDA tolerance `tolerance`) gives the exact solution at T − jH (j = 0 … p−1, the
//     p past samples the approximation reads) and at T + H (one run for all of them).
//  2. The coupled system of the configuration is restarted at T from the reference's states
//     (system::restarted_system); the coupling history holds the reference's coupling variables
//     at T − (p−1)H … T, and the scheme assumes the reference's outputs there
//     (schemes::MacroStepScheme::assume_exact_past: seed-003 rates, Gauss–Seidel's own outputs).
//  3. ONE macro step T → T + H of the configured scheme (explicit Jacobi or Gauss–Seidel) with
//     its approximation and degree, on the in-process executor with the real subsystems and
//     IDA at `tolerance`, restarted at T (runner::JumpPolicy::kRestart).
//  4. Its errors against the reference at T + H, per group: positions and velocities (and other
//     states) of every subsystem, the outputs the coupling laws read as the subsystems' runs
//     returned them (y_{N+1} of seed 001 Eq. 8: a feed-through output with the run's
//     extrapolated input), and the coupling variables u_{N+1} after the consistent update
//     (D-1). A group's error is the largest over its variables and over the start times of
//     |error| / the variable's largest |value| in the reference rows read (absolute where that
//     is 0). Several start times keep a coefficient that happens to vanish at one T (a turning
//     point of the motion) from bending the slope.
// The slope of each group is the least-squares slope of log(error) over log(H), over the H whose
// error is at least kLocalErrorResolution·tolerance (smaller ones are the reference's and IDA's
// own error, not the scheme's); the order of the step's error is the lowest slope of the states
// and outputs groups (the order of seed 001 Eq. 26's vector, whose worst component dominates as
// H → 0), among the groups with a slope.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/settings.hpp"

namespace macrostep::run {

// Relative errors below this multiple of the IDA tolerance are not resolved (see above).
inline constexpr double kLocalErrorResolution = 10.0;

struct LocalErrorOptions {
  // The scheme, order, approximation and --set edits of the run (CosimOptions: scheme,
  // order, approximation are read; estimator, step size, executor are the mode's own).
  CosimOptions cosim;
  std::vector<double> step_sizes;  // H, at least two, each > 0
  std::vector<double> at;  // start times T (T − (p−1)·H ≥ 0 for every H), at least one
  // IDA rtol of the reference and of the step's subsystems; atol_pos = 1e-3·tolerance,
  // atol_vel = tolerance (as [solver]'s defaults).
  double tolerance = 1e-12;
};

// One group of variables: the error at every H (in the order of the step sizes) and its slope.
struct LocalErrorGroup {
  std::string name;  // positions | velocities | other states | outputs | coupling
  std::vector<double> errors;
  double slope = 0.0;      // NaN with fewer than two resolved errors, or one not finite
  std::size_t fitted = 0;  // the errors the slope was fitted to (the resolved ones)
  std::string worst;       // the variable with the largest error at the last H, and its T
};

struct LocalErrorResult {
  std::string config_path;
  std::string scheme;         // explicit | gauss-seidel
  std::string approximation;  // lagrange, c0, c1 or a seed-003 set
  int order = 0;              // κ (the degree k of C0/C1)
  int past_samples = 0;       // p: the history points T − (p−1)H … T
  std::vector<double> at;
  double tolerance = 0.0;
  std::vector<double> step_sizes;
  std::vector<LocalErrorGroup> groups;  // the non-empty groups, in the order above
  double step_order = 0.0;              // lowest slope of the states and outputs groups (NaN: none)
};

// Measures the local error of `config` as described above. Throws SetupError for options that
// do not fit (a scheme other than explicit and gauss-seidel, an automatic order, fewer than two
// step sizes, T too early for the history), config::ConfigError for the configuration, and
// std::runtime_error when the reference or the step fails (naming H and the cause).
LocalErrorResult local_error(const config::RunConfig& config, const LocalErrorOptions& options);

// The table of errors, the slopes and the order (docs/reference/commands.md "local-error").
void print_local_error(std::ostream& out, const LocalErrorResult& result);

}  // namespace macrostep::run
