// Run configuration: one TOML file describes the model, its partition, the integrator
// tolerances, the simulated interval and the output (DESIGN.md; spec/MODELS.md §1). The command
// line's --set KEY=VALUE edits any key of it before it is read (Override, below).
//
// Schema, as notes for developers (every key not listed here is an error; so is a wrong type or
// an out-of-range value). The keys each table accepts are defined once in src/key_tables.cpp,
// which the readers check with; users read docs/reference/configuration-keys.md, which a test
// holds against that definition (`macrostep config-keys`).
//
//   description = "..."              optional, free text copied into the run metadata
//
//   [model]                          required
//   type      = "chain"              optional; the oscillator chain of MODELS.md §1 (only model)
//   masses    = 50                   required integer n_K >= 1
//   seed      = 1                    optional integer >= 0: PRNG seed of every random draw
//   mass      = 10.0                 optional value (default 1.0), > 0
//   left_end  = "fixed"              optional "fixed" | "free"  (free: element 1 is zero)
//   right_end = "fixed"              optional "fixed" | "free"  (free: element n_K+1 is zero)
//   x0 = 0.0                         optional value or array of n_K numbers [m]
//   v0 = 0.0                         optional value or array of n_K numbers [m/s]
//
//   A "value" is a number, or an inline table with exactly one of
//     {uniform = [a, b]}          drawn per item, uniform in [a, b]           (a <= b)
//     {signed_uniform = [a, b]}   magnitude uniform in [a, b], random sign    (0 <= a <= b)
//     {linear = a}                a * i, i the 1-based mass index (K-5.4a initial positions)
//   Keys that must be positive reject ranges reaching zero or below and signed_uniform.
//
//   [model.element]                  required: the law of every element (seed 000 Eq. 2.9)
//   c = 1e6    required >= 0         d, C, D optional >= 0 (default 0)
//   ex = 3, ev = 3                   optional exponents >= 1
//   modulation = {amplitude = 9.0, omega = 0.3142, period = 10}
//                                    optional: c_i = c * (1 + amplitude * sin(omega *
//                                    ((i - 1) mod period))), i the 1-based element index
//
//   [[model.mass_override]]          optional, repeatable: masses first..last (1-based,
//   first = 41, last = 50, mass = 0.1    inclusive; last defaults to first) get `mass` (> 0)
//
//   [[model.element_override]]       optional, repeatable: elements first..last (element i
//   first = 2, last = 2, d = 1e4     joins masses i-1 and i; 1..n_K+1) get any of c, d, C, D,
//                                    ex, ev (at least one); a free end's element is excluded
//
//   [[model.force]]                  optional, repeatable: one group of external forces
//   type = "harmonic"                required: "harmonic" | "contact" | "impulse" | "modified_sine"
//   exactly one selection:
//     masses = [50]                  explicit 1-based indices, distinct
//     fraction = 0.5                 round(fraction * n_K) masses drawn without replacement
//     all = true                     every mass
//     coupling_bodies = true         the two bodies next to every cut of [partition], in chain
//                                    order (needs at least two subsystems)
//   parameters by type (values unless noted; drawn per selected mass):
//     harmonic       amplitude, omega (required); phase (default 0)
//     contact        amplitude (required, A_C), stiffness (required, B_C > 0)
//     impulse        amplitude, duration (number > 0) required; exactly one of
//                    time (value >= 0) or times (array of numbers >= 0, one pulse each);
//                    edge (number > 0, default 1e-6)
//     modified_sine  amplitude, omega (required); phase (default 0); exponent (integer >= 1,
//                    default 95)
//   alternate_sign = false           optional: the k-th selected mass (0-based, chain order)
//                                    gets amplitude * (-1)^k
//
//   A coupled system of built-in models is described instead of [model] (and [partition]) by
//   (system/system_description.hpp; names: letters, digits, '_', '-', no '.'):
//   [[subsystem]]                    repeatable, at least one
//   name = "motor"                   required, unique among subsystems and connections
//   model = "drive_train"            required: "drive_train" | "hydraulic_cylinder" | "pid" |
//                                    "belt_drive" | "oscillator_mass" | "chain_segment" |
//                                    "plugin" | "fmu";
//                                    the model's keys follow in the same table:
//     drive_train         inertia = [J_1, ...] (> 0, required); shaft = [{c, d, C, D, ex, ev},
//                         ...] (one per neighbouring pair, c required); bearing_damping, angle0,
//                         speed0 (one number per inertia); load = [{inertia = k, constant,
//                         step, step_time, step_width}]; left_coupled, right_coupled (default
//                         true: inputs tau_left, tau_right). Outputs phi_1, phi_<n>, omega_1,
//                         omega_<n> (library/drive_train.hpp)
//     hydraulic_cylinder  mass, area_a, area_b (> 0, required); viscous_friction,
//                         coulomb_friction (>= 0); coulomb_speed (> 0); x0, v0; rod_coupled
//                         (default true). Inputs pressure_a, pressure_b[, rod_force]; outputs
//                         x, v, volume_a, flow_a, volume_b, flow_b
//     pid                 kp, ki, kd, derivative_filter_time, tracking_time, output_min,
//                         output_max, output_lag, setpoint_input, setpoint, integral0,
//                         derivative_filter0, command0. Inputs measured[, setpoint]; output
//                         command (library/pid_controller.hpp)
//     belt_drive          driver_inertia, driven_inertia, driver_radius, driven_radius,
//                         span_stiffness, idler_mass (> 0, required); idler_factor (> 0,
//                         default 1); span_damping, pretension, idler_damping (>= 0);
//                         bearing_damping, speed0 ([driver, driven]); left_coupled,
//                         right_coupled. Inputs tau_left, tau_right, idler_force; outputs
//                         phi_1, omega_1, phi_2, omega_2, x_idler, v_idler, tension_tight,
//                         tension_slack (library/belt_drive.hpp)
//     oscillator_mass     mass (> 0, default 1), c, d (ground element, >= 0), x0, v0;
//                         force_input (input force, times force_sign = 1 | -1);
//                         displacement_input (inputs x_in, v_in driving its own element
//                         coupling_c, coupling_d and the cubic coupling_C, coupling_D
//                         (>= 0, default 0); output force: feed-through); at least one
//                         of the two; velocity_input (input mu, the projection multiplier
//                         of a joint: x' = v + force_sign*mu). Outputs x, v[, force]
//                         (library/oscillator_mass.hpp)
//     dc_motor            resistance, inductance, torque_constant, inertia (> 0), damping
//                         (>= 0), gear_ratio (>= 1), current0, angle0, speed0 (output side),
//                         right_coupled. Inputs voltage[, tau_right]; outputs phi, omega
//                         (gearbox output), current (library/dc_motor.hpp)
//     chain_segment       masses = [first, last] (1-based, inclusive) of the [model] chain,
//                         which then stands beside the description (without [partition]
//                         and without coupling_bodies selections); the segments must cover
//                         every mass once. Inputs "lambda@<k>" (the cut element k at each end
//                         that is not a chain end), outputs x_<first>, x_<last>, v_<first>,
//                         v_<last> (library/chain.hpp); a spring_damper connection with the
//                         cut element's law replaces element k
//     any model           rtol, atol_pos, atol_vel, linear_solver, max_order, max_steps: the
//                         keys and ranges of [solver], for this subsystem's IDA in a
//                         co-simulation (the rest keep [solver]'s; SolverOverride)
//     plugin              library (path, relative to this file's directory), parameters (a
//                         table handed to the plugin as JSON; plugin/plugin_api.hpp)
//     fmu                 path (an FMI 2.0 Model Exchange .fmu, relative to this file's
//                         directory; required), parameters = {variable = start value, ...}
//                         (numbers or booleans), inputs = ["name", ...], outputs = [...] (FMU
//                         variable names; default every Real input / output; fmu/fmu.hpp)
//   [[connection]]                   repeatable
//   name = "shaft"                   required, unique; names the coupling variable (result
//                                    column; a displacement writes <name>.position/.velocity,
//                                    a joint <name>.lambda/.mu)
//   law = "rotational_spring_damper" required: "spring_damper" | "rotational_spring_damper" |
//                                    "signal" | "displacement" | "hydraulic_node" | "joint"
//   from = ["motor.phi_2", ...]      required: the outputs the law reads, "subsystem.output":
//                                    spring_damper [x_left, v_left, x_right, v_right];
//                                    rotational_spring_damper [angle_left, speed_left,
//                                    angle_right, speed_right]; signal [source]; displacement
//                                    [position, velocity]; hydraulic_node [volume_1, ...];
//                                    joint [x_a, v_a, x_b, v_b] (seed 004: x_a = x_b held by
//                                    the multipliers; implicit/semi-implicit schemes only)
//   to = ["motor.tau_right", ...]    required: the inputs its variable feeds (one or more;
//                                    an effort input fed by several connections is their sum);
//                                    displacement: {position = [...], velocity = [...]};
//                                    joint: {force = [...], velocity = [...]} (λ and μ)
//   law keys: spring_damper, rotational_spring_damper: c (required), d, C, D, ex, ev;
//     signal: gain (default 1), offset (default 0); hydraulic_node: volume (> 0),
//     initial_pressure (required), bulk_modulus = "constant" (modulus > 0) |
//     "pressure_dependent" (modulus_a > 0, modulus_b >= 0, modulus_c < -1), initial_volumes
//   approximation = "c1"             optional: this connection's variables on a macro step (the
//                                    names and rules of cosim.approximation; default: that one)
//   Checked: every reference names an existing subsystem and variable, every input is fed by
//   a connection (several only into an effort input: model::Subsystem::input_is_effort),
//   every subsystem is in a connection, names are unique, and no loop
//   is closed by feed-through outputs alone (it is named; seed 001 §1). Other direct
//   feed-through is solved by the consistent update at every macro point (METHODS D-1).
//
//   [partition]                      optional (default: one subsystem); exactly one of
//   subsystems = 10                  equal partition, 1 <= subsystems <= n_K
//   sizes = [40, 10, 40]             explicit sizes >= 1 summing to n_K
//
//   [solver]                         optional: the IDA settings of every run
//   rtol = 1e-6                      0 < rtol < 1
//   atol_pos = 1e-9                  > 0, default 1e-3 * rtol (follows --rtol when omitted)
//   atol_vel = 1e-6                  > 0, default rtol (follows --rtol when omitted)
//   linear_solver = "klu"            "klu" | "dense"
//   max_order = 5                    integer 1..5
//   max_steps = 500000               integer >= 1: micro steps per output interval
//   micro_step_stop = "adjust"       how micro steps end at a macro point (METHODS §6.6):
//                                    "adjust" (Listing 4.1) | "exact" | "overshoot" (h_mic <= H,
//                                    interpolate; fixed-H explicit only, D-36); [solver] only
//
//   [simulation]                     required
//   end_time = 0.25                  > 0 [s]; the run starts at t = 0
//   output_interval = 1e-4           > 0 [s]; rows at k * interval and at end_time
//
//   [output]                         optional
//   file = "k-5.1.csv"               default: <config stem>.csv in the working directory
//   all_states = false               true: every state; false: the coupling-body states
//                                    (every state when the partition has one subsystem)
//   checkpoint_every = "30s"         as --checkpoint-every: seconds (a number, "30s") or
//                                    "500steps"; the command line wins
//   checkpoint = "run.ckpt"          as --checkpoint (needs checkpoint_every)
//   rows = "macro"                   co-simulation rows: "macro" (every output_every-th
//                                    accepted macro point) | "grid" (at k * output_interval,
//                                    each subsystem's outputs from its solver's dense output;
//                                    bounds the macro step to 512 output intervals)
//
//   [cosim]                          optional: the co-simulation of `macrostep run` (without
//                                    --monolithic; spec/METHODS.md §3, §5, §6, defaults §9)
//   scheme = "explicit"              "explicit" (explicit Jacobi, §3.1) | "implicit" (Newton
//                                    corrector, §4.1-4.3) | "semi-implicit" (one corrector
//                                    pass, §4.4) | "waveform" (relaxation, §4.6)
//   estimator = "exMD"               explicit: "exMD" (default, D-48) | "exLE" | "exCV";
//                                    implicit, semi-implicit, waveform: "imMD" (default) |
//                                    "imCV"; any scheme: "none" = fixed macro step H (exH)
//   Keys of scheme = "gauss-seidel" (fixed H, estimator "none"; not with the other schemes):
//   sequence = [2, 1]                the order the subsystems run in, 1-based; default index order
//   gauss_seidel = "converged"       the end value of an input whose law reads the subsystem
//                                    taking it (force/force): "converged" (default: repeated
//                                    until it settles) | "sequential" (seed 000 App. C: its own
//                                    outputs extrapolated, each subsystem run once)
//   Keys of the iterative schemes (not with "explicit"):
//   jacobian = "fd"                  "fd" (perturbed runs, §4.2) | "sap" (§4.5) | "reuse" (fd
//                                    kept while it contracts) | "quasi-newton" (IQN-ILS) |
//                                    "heun" (a Heun step of the linearised subsystems, seed
//                                    004 Eq. 49) | "broyden" (fd kept up to date by secant
//                                    updates, §4.9); not waveform
//   tau = 0.33                       > 0: corrector convergence tolerance (§4.3)
//   max_corrector_passes = 10        integer 1..100: n_cor^max passes after the predictor
//   perturbation_min = 0.1           > 0: the smallest finite-difference perturbation Δλ_min
//   omega = 0.3                      in (0, 1): waveform relaxation (waveform only)
//   final_pass = (by jacobian)       boolean (implicit, auto): false ends a converged attempt
//                                    with the pass just run when its own iterate passes the
//                                    test, without a pass of the next iterate (D-50); unset:
//                                    false with jacobian "fd", true with the others
//   With estimator = "none" an iterative scheme still tests convergence with the controller's
//   rtol and atol_u (allowed then); it continues after max_corrector_passes (seed 000 §5.1).
//   order = "auto"                   "auto" | integer 0..5: the polynomial degree kappa.
//                                    auto: order control up to kappa_max = 5 (needs an
//                                    estimator); K with an estimator: controlled H at fixed
//                                    kappa = K (seed 000 §5.8); K with "none": the fixed kappa.
//                                    Default: "auto", or 2 with estimator = "none"
//   order_strategy = "ida"           "ida" (Listing 3.2, default) | "conservative" (Listing
//                                    3.1); only with order = "auto"
//   step_size = 1e-9                 > 0 [s]; estimator "none": the fixed H (required; at most
//                                    1e7 rows: end_time / (H * output_every)); otherwise H_init
//                                    (default 1e-9, MODELS.md §1.7)
//   Controller keys (not with estimator = "none"):
//   rtol = 1e-4                      0 < rtol < 1, the macro-step error test (not IDA's rtol)
//   atol_pos = 1e-7                  > 0, default 1e-3 * rtol (follows --rtol when omitted)
//   atol_vel = 1e-4                  > 0, default rtol (follows --rtol when omitted)
//   atol_u = 1.0                     > 0, default 1e4 * rtol (follows --rtol when omitted)
//   safety = 6.0                     Gamma > 0
//   r_min = 0.5, r_max = 1.5         0 < r_min <= 1 <= r_max: step-factor limits (Listing 3.3)
//   dead_zone = true                 false: no r = 1 dead zone (the Gamma study, K-5.3)
//   h_max = 1e-3                     > 0 [s], optional upper limit of H (>= step_size)
//   prediction_ratio_limit = 10      0 | >= 1: exLE and exMD (explicit steps, also under scheme
//                                    auto) raise their estimate by rho/limit where the coupling
//                                    variables land rho > limit times farther from u^pre than
//                                    the comparison's u_hat^pre (an event inside a subsystem,
//                                    D-52); 0 keeps the seeds' estimate
//   Other keys:
//   predictor = "lagrange"           "lagrange" | "least_squares" (METHODS §2.3)
//   approximation = "lagrange"       the coupling variables on a macro step (METHODS §2.2–2.5):
//                                    "lagrange" | "c0" | "c1" (seed 001; degree k = order,
//                                    0..3 fixed; estimator "none" or "exCV", D-7) | a seed-003
//                                    set "const-2-3-opt", "lin-2-3-opt", ... (estimator "none",
//                                    D-8; sets with b != 0 need undamped spring couplings);
//                                    explicit and gauss-seidel schemes (gauss-seidel: the
//                                    extrapolated inputs, no sets with b != 0). A
//                                    [[connection]] may name its own.
//   least_squares_points = 8         integer > kappa + 1 (kappa: the fixed order, or 5 with
//                                    "auto"), at most 64; only with "least_squares"
//   jump_handling = "shift"          what the subsystems' IDA does where the input polynomial
//                                    jumps at T_N: "shift" the history to the new polynomial
//                                    (default; not where the history span does not resolve the
//                                    modes) | "keep" its BDF history | "restart" IDA (IDAReInit,
//                                    order 1) at every T_N | "restart-auto" where the jump
//                                    exceeds IDA's tolerance or fewer micro steps than its order
//                                    are expected. Default "keep" with micro_step_stop =
//                                    "overshoot"
//   min_micro_steps = 2              0 or integer 2..1000: micro steps at most H/min_micro_steps
//                                    (default 2: with shift within 1.25x the exact-integration
//                                    scheme's error; 0 with micro_step_stop = "overshoot")
//   output_every = 1                 integer >= 1: write every k-th accepted macro point (the
//                                    first and the last are always written)
//   executor = "processes"           "inprocess" | "processes" (one process per subsystem);
//                                    default: processes for more than one subsystem
//   threads = 0                      integer >= 0: worker threads of the executor, 0 = all cores
//   A co-simulation needs a [partition] of at least two subsystems; that is checked when one
//   runs (check_cosimulation), since the same file may serve a monolithic run.
//
//   [executor]                       optional: the process executor's limits
//   handshake_timeout = 60.0         > 0 [s], at most 1e6: how long a worker process may take to
//                                    build its subsystem and report ready; default 10 s plus
//                                    100 us per state of the largest subsystem
//                                    (--handshake-timeout overrides it)
//   processes = "auto"               worker processes: integer >= 1, "per-subsystem" or "auto"
//                                    (default; placement::resolve_process_count; --processes)
//   ranks = [1, 1, 2]                 --executor mpi only: per subsystem the rank (1..R-1) of the
//                                    node agent that runs it; default: contiguous blocks
//
// Diagnostics: every problem raises ConfigError whose what() is one line
//   <file>:<line>: <key.path>: <problem>
// e.g. "configs/bad.toml:12: model.element.c: must be >= 0 (got -1)". Elements of arrays of
// tables are counted from 1 ("model.force[2].type"). A key missing from the top level has no
// line ("<file>: simulation: missing required table [simulation]").
//
// Extension point: each top-level table is parsed by one entry of the section list in
// run_config.cpp; a new section adds an entry there and a member here. An unknown table is an
// error like any unknown key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/config/vocabulary.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/control/order.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/output/destinations.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/runner/jump_policy.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep::config {

// A user error in a configuration. what() is the complete one-line message described above.
class ConfigError : public std::runtime_error {
 public:
  // line == 0: no line (top-level problems, problems found after parsing).
  ConfigError(std::string file, unsigned line, std::string key_path, const std::string& problem);
  const std::string& file() const { return file_; }
  unsigned line() const { return line_; }
  const std::string& key_path() const { return key_path_; }
  // The message after file, line and key.
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  unsigned line_;
  std::string key_path_;
  std::string problem_;
};

struct SolverConfig {
  double rtol = 1e-6;
  std::optional<double> atol_pos;  // unset: 1e-3 * rtol (seed 000 §5)
  std::optional<double> atol_vel;  // unset: rtol
  ida::LinearSolver linear_solver = ida::LinearSolver::kKlu;
  int max_order = 5;
  long max_steps = 500000;
  MicroStepStop micro_step_stop = MicroStepStop::kAdjust;
  unsigned micro_step_stop_line = 0;  // of [solver] micro_step_stop (0: not given)

  double effective_atol_pos() const { return atol_pos.value_or(1e-3 * rtol); }
  double effective_atol_vel() const { return atol_vel.value_or(rtol); }
};

// The [solver] keys a [[subsystem]] gives itself: in a co-simulation they replace
// [solver]'s for that subsystem only; unset members keep [solver]'s. The monolithic run is one
// IDA system and uses [solver] alone.
struct SolverOverride {
  std::optional<double> rtol, atol_pos, atol_vel;
  std::optional<ida::LinearSolver> linear_solver;
  std::optional<int> max_order;
  std::optional<long> max_steps;

  bool empty() const {
    return !rtol && !atol_pos && !atol_vel && !linear_solver && !max_order && !max_steps;
  }
};

// `solver` with the members `o` sets. An atol that neither [solver] nor `o` gives follows the
// resulting rtol (as in [solver]).
SolverConfig with_override(SolverConfig solver, const SolverOverride& o);

struct PartitionConfig {
  unsigned line = 0;  // line of the [partition] table (0: none given)
  // Subsystem boundaries [0, b_1, ..., n_K] (0-based mass indices): subsystem L holds masses
  // boundaries[L] .. boundaries[L+1]-1.
  std::vector<std::size_t> boundaries;

  std::size_t subsystems() const { return boundaries.empty() ? 0 : boundaries.size() - 1; }
  // 1-based indices of the bodies next to every cut, in chain order: b_1, b_1+1, b_2, ...
  std::vector<std::size_t> coupling_bodies() const;
};

struct SimulationConfig {
  double end_time = 0.0;
  double output_interval = 0.0;
};

struct OutputConfig {
  std::string file;  // empty: the default name (see default_output_file)
  bool all_states = false;
  // [output] rows; unset: default_row_times().
  std::optional<RowTimes> rows;
  unsigned rows_line = 0;  // of [output] rows (0: not given)
  // [output] checkpoint_every and checkpoint: the --checkpoint-every / --checkpoint of the file
  // (the command line wins). checkpoint_every is kept as written ("30", "0.5s", "500steps";
  // a number means seconds) and parsed by the run (checkpoint::parse_interval); empty: none.
  std::string checkpoint_every;
  unsigned checkpoint_every_line = 0;
  std::string checkpoint;  // empty: beside the result file
  unsigned checkpoint_line = 0;
};

struct ExecutorConfig {
  std::optional<double> handshake_timeout;           // [s]; unset: scaled to the model
  std::optional<placement::ProcessCount> processes;  // unset: auto
  // --executor mpi: per subsystem the rank of its node agent (1..R-1); empty: contiguous blocks.
  // Checked against the subsystems and ranks when an MPI run starts (ranks_line for the message).
  std::vector<int> ranks;
  unsigned ranks_line = 0;
};

// order = "auto" | K.
struct OrderSetting {
  bool automatic = true;
  int kappa = 0;  // the fixed degree when !automatic
  static OrderSetting auto_order() { return {true, 0}; }
  static OrderSetting fixed(int k) { return {false, k}; }
};

inline constexpr int kMaxCosimOrder = 5;             // kappa_max (METHODS D-4)
inline constexpr int kDefaultFixedOrder = 2;         // fixed-H kappa (METHODS §9)
inline constexpr double kDefaultInitialStep = 1e-9;  // H_init of chains (MODELS.md §1.7)
inline constexpr int kMaxLeastSquaresPoints = 64;
// The most subsystems a configuration may have: the process executor gives each one a region
// of the shared-memory segment, whose region table has ipc::kMaxRegions entries (two are the
// run's own). Refused when the file is read, not when the run starts.
inline constexpr std::size_t kMaxSubsystems = 254;
// The most rows a result file may have: a guard against typos that would fill the disk. The
// file's fixed steps are checked when it is read; the runs check again, since --stop-time and
// the monolithic reference's times can raise the count.
inline constexpr double kMaxOutputRows = 1e7;
// The problem of a macro-step controller key (rtol, atol_*, safety, ...) in a run with a fixed
// step; `estimator_source` says where "none" comes from (`estimator = "none"`, `--estimator
// none`). The file's check and the run's (with the command line's estimator) say the same.
inline std::string controller_key_without_estimator(std::string_view estimator_source) {
  return "belongs to the macro-step controller, and " + std::string(estimator_source) +
         " (a fixed step) has none; remove it or choose an estimator";
}
// The shortest simulated time ([simulation] end_time, --stop-time) [s]: two decades above the
// macro-step controller's smallest step and far below any time scale of the models; IDA itself
// cannot start towards an end time near 1e-200 s.
inline constexpr double kMinEndTime = 1e-12;

// [cosim]. Optional members hold "given in the file"; effective_*() apply the defaults.
struct CosimConfig {
  bool given = false;  // the file has a [cosim] table
  unsigned line = 0;   // its line
  CosimScheme scheme = CosimScheme::kExplicit;
  control::Estimator estimator = control::Estimator::kExMD;
  bool estimator_given = false;  // else the scheme's default (D-48: exMD, imMD)
  // The macro-step controller's keys (rtol, atol_*, safety, ...) that a --set gave while the
  // file's estimator is "none". The file alone is checked when it is read; these are checked
  // against the run's estimator (run::resolve_cosim), which --estimator may still choose.
  std::vector<std::string> controller_keys_set;
  // The iterative schemes (implicit, semi-implicit, waveform; METHODS §4, defaults §9).
  // The interface Jacobian by its registry name (corrector/jacobian_registry.hpp).
  std::string jacobian = "fd";
  double tau = 0.33;
  int max_corrector_passes = 10;
  double perturbation_min = 0.1;
  double omega = 0.3;
  // Implicit and auto (D-50); unset: resolved by the run's settings from the Jacobian strategy
  // (no final pass with an exact one: corrector::JacobianTraits::exact).
  std::optional<bool> final_pass;
  bool corrector_keys_given = false;  // any of the six keys above is in the file
  bool jacobian_given = false, omega_given = false, final_pass_given = false;
  std::optional<OrderSetting> order;
  // kIdaLike or kConservative: the strategy of order = "auto" (a fixed order implies kFixed).
  control::OrderStrategy order_strategy = control::OrderStrategy::kIdaLike;
  std::optional<double> step_size;
  double rtol = 1e-4;
  std::optional<double> atol_pos, atol_vel, atol_u;
  double safety = 6.0;
  double r_min = 0.5;
  double r_max = 1.5;
  bool dead_zone = true;
  std::optional<double> h_max;
  double prediction_ratio_limit = 10.0;
  bool prediction_ratio_limit_given = false;
  PredictorKind predictor = PredictorKind::kLagrange;
  int least_squares_points = 8;
  polynomials::Approximation approximation;  // Lagrange unless given
  // Unset: the run's default (run/settings.hpp: shift and 2, or keep and 0 with
  // micro_step_stop = "overshoot"); after settings resolution both are set.
  std::optional<runner::JumpPolicy> jump_handling;
  std::optional<int> min_micro_steps;  // 0: no limit, else >= 2
  int output_every = 1;
  // Gauss–Seidel (METHODS §3.2): the subsystems in the order they run, 0-based (the file
  // writes them 1-based); empty: in index order.
  std::vector<std::size_t> sequence;
  unsigned sequence_line = 0;
  // gauss_seidel = "converged" | "sequential": the end value of a law that reads the subsystem
  // taking it (converged unless given).
  GaussSeidelEndValue gauss_seidel = GaussSeidelEndValue::kConverged;
  bool gauss_seidel_given = false;
  ExecutorKind executor = ExecutorKind::kInProcess;
  bool executor_given = false;  // the file names the executor (else: chosen by the run)
  int threads = 0;

  bool fixed_step() const { return estimator == control::Estimator::kNone; }
  // The schemes with a corrector (METHODS §4; auto for its implicit steps); Gauss–Seidel is
  // explicit.
  bool iterative() const {
    return scheme == CosimScheme::kImplicit || scheme == CosimScheme::kSemiImplicit ||
           scheme == CosimScheme::kWaveform || scheme == CosimScheme::kAuto;
  }
  // Whether the macro-step controller's key `key` (rtol, atol_pos, ...) is used with a fixed
  // step: the corrector's convergence test of an iterative scheme, and Gauss–Seidel's settling
  // of a subsystem whose law reads its own outputs, weigh with rtol and the atols.
  bool uses_at_fixed_step(std::string_view key) const {
    return (iterative() || scheme == CosimScheme::kGaussSeidel) &&
           (key == "rtol" || key.starts_with("atol_"));
  }
  // Whether exLE or exMD estimates steps, so that prediction_ratio_limit applies: the explicit
  // scheme with one of them, or auto (its explicit steps take exMD).
  bool explicit_state_estimates() const {
    return scheme == CosimScheme::kAuto ||
           (scheme == CosimScheme::kExplicit &&
            (estimator == control::Estimator::kExMD || estimator == control::Estimator::kExLE));
  }
  // Not given: "auto" with an estimator, kDefaultFixedOrder without.
  OrderSetting effective_order() const {
    return order.value_or(fixed_step() ? OrderSetting::fixed(kDefaultFixedOrder)
                                       : OrderSetting::auto_order());
  }
  // The highest degree a run can use (least-squares points must exceed it by more than one).
  int highest_order() const {
    const OrderSetting o = effective_order();
    return o.automatic ? kMaxCosimOrder : o.kappa;
  }
  double effective_atol_pos() const { return atol_pos.value_or(1e-3 * rtol); }
  double effective_atol_vel() const { return atol_vel.value_or(rtol); }
  double effective_atol_u() const { return atol_u.value_or(1e4 * rtol); }
};

// The estimator of a scheme when none is named (D-48): exMD explicit and auto, imMD otherwise.
control::Estimator default_estimator(CosimScheme s);
// Whether the estimator belongs to the scheme (none belongs to every scheme but auto: fixed H;
// auto takes every other one and uses its explicit or implicit form, adaptive.hpp).
bool estimator_fits(CosimScheme s, control::Estimator e);
// The names of the estimators that fit the scheme, as messages list them: its default first,
// then the others in table order, "none" last.
std::vector<std::string_view> fitting_estimator_names(CosimScheme s);

// What is wrong with `approximation` under the [cosim] values `c` (scheme, estimator, order,
// predictor; METHODS D-7, D-8), or "" if it may run. The file's checks and the command-line
// overrides share it.
std::string approximation_problem(const polynomials::Approximation& approximation,
                                  const CosimConfig& c);

// One --set KEY=VALUE of the command line (docs/reference/configuration.md, "Overrides"): an
// edit of the file's TOML tree before its sections are read, so that every check of the file
// applies to it. KEY is a dotted path of bare keys or keys in double quotes; in an array a
// segment is a 1-based index or, in an array of tables, an element's name
// (subsystem.motor.inertia, model.force.2.omega; `[N]` stands for `.N`). VALUE is a TOML value
// (1e-5, true, [1, 2], "a b", {uniform = [0, 1]}), else a number as C writes it (.5), else a
// string (cosim.scheme=implicit). The key is replaced, or added with the tables on its way where
// the file lacks it; later edits win.
struct Override {
  std::string argument;  // KEY=VALUE as given
  std::string path;      // the key as messages name it ("subsystem[1].inertia")
  std::string created;   // the outermost table it added ("cosim"), if any
};

struct RunConfig {
  std::string path;  // as given to load_config(); used in every message
  // The complete file text (kept in checkpoints); for an SSP package or SSD, the TOML text that
  // describes its system (ssp/ssp.hpp).
  std::string text;
  // What the files the description names need kept: an SSP package's unpacked directory, whose
  // FMUs the runs build their subsystems from (it is removed when the last copy of the
  // configuration is destroyed). Null for a TOML file and an SSD.
  std::shared_ptr<const void> files;
  // The --set edits in order, and with any, the configuration they produced as TOML (toml++'s
  // rendering: the file's comments are not kept).
  std::vector<Override> overrides;
  std::string overridden_text;
  // The configuration a run uses, as TOML (its metadata's config.text).
  const std::string& effective_text() const { return overrides.empty() ? text : overridden_text; }
  std::string description;

  // The model; explicit per-mass initial values (x0 = [...] / v0 = [...]) are in
  // chain.x0_values / chain.v0_values.
  library::ChainSpec chain;

  PartitionConfig partition;
  // The model every run builds: the [[subsystem]] / [[connection]] description, or the [model]
  // chain cut at `partition` lowered into one (system::chain_description: Naming::kGlobal, the
  // uncut chain as `whole`, the chain's facts in `chain`). Set by load_config / parse_config for
  // every file they accept; `chain` and `partition` keep the chain syntax as written.
  std::optional<system::SystemDescription> system_description;
  // One per [[subsystem]] (empty for a [model] chain): its own solver keys, if any.
  std::vector<SolverOverride> subsystem_solvers;
  SolverConfig solver;
  SimulationConfig simulation;
  OutputConfig output;
  ExecutorConfig executor;
  CosimConfig cosim;
};

// Where a co-simulation's rows are without [output] rows: on the output grid for a described
// system ([[subsystem]] / [[connection]], an SSP), so that `compare` against a reference on the
// same grid measures the run itself; at the macro points for a [model] chain, whose studies
// report their errors there (the published figures, `reference --at`). A default grid falls
// back to macro points where the rows inside a step would not be the solvers' own values (a
// feed-through subsystem, a joint) or cannot be had (all states, a Co-Simulation FMU, a fixed
// step over 512 output intervals).
inline RowTimes default_row_times(const RunConfig& config) {
  const bool chain = config.system_description && config.system_description->whole;
  return chain ? RowTimes::kMacroPoints : RowTimes::kGrid;
}

// Reads and validates a configuration file with the --set edits `overrides` ("KEY=VALUE", see
// Override). Throws ConfigError for any problem, including an unreadable file and TOML syntax
// errors; one that a --set gave is named by it ("--set cosim.rtol=2: cosim.rtol: must be < 1").
// A path ending in .ssp (an SSP 1.0 package) or .ssd (a system structure description) is read
// as the TOML text that ssp::translate() makes of it; its problems, and those the TOML's checks
// find, name the SSP file, line and element ("sys.ssp/SystemStructure.ssd:12: ssd:Connection
// a.y -> b.u: ...").
RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The same for text already in memory; `path` names it in messages, and relative file paths in
// the text are relative to its directory, or, when `path` ends in .ssp, to the root of that
// package unpacked anew (the text a checkpoint kept of an SSP run; RunConfig::files holds it).
RunConfig parse_config(std::string_view text, const std::string& path,
                       const std::vector<std::string>& overrides = {});

// Where the value of `key_path` comes from, as a message about it begins: "FILE:LINE" for a line
// of the file (line > 0), "--set KEY=VALUE" for the edit that gave it, else "FILE".
std::string origin(const RunConfig& config, unsigned line, std::string_view key_path);
// A ConfigError about `key_path` located the same way: at the file's line, or at the --set.
ConfigError error_at(const RunConfig& config, unsigned line, const std::string& key_path,
                     const std::string& problem);

// The explicit chain parameters: library::realize(chain) (which also applies the per-mass
// initial values and starts contact bodies at -|x0|, MODELS.md §1.3), as the loaded description
// holds them. Throws ConfigError (no line) if the file describes [[subsystem]]s instead.
library::ChainParameters realize_chain(const RunConfig& config);

// Cuts the [model] chain of `config` at `boundaries` instead (strictly increasing from 0 to
// model.masses, as library::equal_partition gives them): sets partition.boundaries and lowers
// the chain again (the realized chain and its force selections are kept). Throws ConfigError if
// the file describes [[subsystem]]s, std::invalid_argument for wrong boundaries.
void set_partition(RunConfig& config, const std::vector<std::size_t>& boundaries);

// The number of subsystems: of the system description, or of the chain's partition.
std::size_t subsystem_count(const RunConfig& config);

// Every file `config` reads, each with what it is for messages ("the configuration", "the input
// file `file` of subsystem brake", "the plugin library of subsystem a", "the FMU of subsystem
// b"): the configuration (or SSP file) itself, then each subsystem's model files
// (library::model_files) in subsystem order, each path once. No file a command writes may be one
// of them: every command that writes files takes this list as the inputs of its
// output::Destinations, so that a result never replaces the data its run reads.
std::vector<output::Destination> input_files(const RunConfig& config);

// Throws ConfigError unless the configuration can run as a co-simulation: the partition (or the
// system description) must have at least two subsystems (the message points at [partition], or
// says it is missing).
void check_cosimulation(const RunConfig& config);

// What a run computes; each kind has its own default result file, so that running one kind
// never overwrites the result of another.
enum class ResultKind { kCosimulation, kMonolithic, kReference };

// The kind's name as a run's metadata writes it ("mode": "cosimulation", "monolithic",
// "reference").
const char* to_string(ResultKind kind);

// Default result file: [output].file if set, else "<config stem>.csv" in the working
// directory, for a co-simulation. A monolithic run inserts ".monolithic" before the extension,
// a reference ".reference" ("k-5.1.csv" -> "k-5.1.monolithic.csv", "k-5.1.reference.csv").
std::string default_output_file(const RunConfig& config, ResultKind kind);

}  // namespace macrostep::config
