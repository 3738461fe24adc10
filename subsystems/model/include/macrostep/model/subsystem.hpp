// The Subsystem interface: one residual system F(t, z, z', u(t)) = 0 in IDA form.
//
// The same interface serves a whole model (the monolithic baseline) and one cut piece of it
// (a co-simulation subsystem). A subsystem knows nothing about macro steps, polynomials or
// solvers: the integrator evaluates the inputs u(t) from whatever the caller handed over and
// passes them to residual() and jacobian().
//
// Contract for implementers and callers:
//  - Sizes, state roles, names and the Jacobian sparsity pattern are fixed at construction and
//    never change; callers may cache them.
//  - residual(), jacobian() and outputs() are pure functions of their arguments (no hidden
//    state), so that any number of integrators (nominal, comparison, perturbed runs, clones)
//    can share one const Subsystem concurrently from different threads.
//  - initial_state() returns a consistent pair: residual(t0, z0, z0', u(t0)) == 0 for any u(t0)
//    that the model's coupling would supply (for the chain the velocities' derivatives depend
//    on u, so the integrator asks for initial_state with the inputs at t0).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/model/events.hpp"

namespace macrostep::model {

// The time every run starts at: [simulation] describes the interval 0 .. end_time, and a model's
// initial_time() returns it (a plugin whose initial_time() differs is refused at loading).
inline constexpr double kStartTime = 0.0;

// Which error-weight group a state belongs to (seed 000 §5: rtol, atol_pos, atol_vel).
enum class StateRole : std::uint8_t { kPosition, kVelocity, kOther };

// What a nominal magnitude (Subsystem::state_nominals, output_nominal) must be: finite and > 0.
inline bool valid_nominal(double v) {
  return v > 0.0 && std::isfinite(v);
}

// Compressed sparse column pattern of dF/dz + cj*dF/dz' (square, size n).
// Row indices within each column are strictly increasing.
struct SparsityPattern {
  std::size_t n = 0;
  std::vector<std::int64_t> column_start;  // size n + 1, column_start[0] == 0
  std::vector<std::int64_t> row_index;     // size column_start[n]
  std::size_t nonzeros() const { return row_index.size(); }
};

// Coordinate pattern (row, column) of a rectangular sparse matrix; entries unique, in any fixed
// order. Used for the input and output Jacobians below.
struct EntryPattern {
  std::vector<std::size_t> row, column;
  std::size_t nonzeros() const { return row.size(); }
};

class Subsystem {
 public:
  virtual ~Subsystem() = default;

  virtual std::size_t state_size() const = 0;
  virtual std::size_t input_size() const = 0;
  virtual std::size_t output_size() const = 0;

  // True if outputs() depends on u directly (y = y(t, z, u)); the chain has none.
  virtual bool has_feedthrough() const { return false; }
  // Whether output o may depend on u directly (structurally); false for every output without
  // has_feedthrough(). Default: every output of a feed-through subsystem. The configuration
  // uses it to find algebraic loops (only such outputs close one).
  virtual bool output_feeds_through(std::size_t o) const {
    (void)o;
    return has_feedthrough();
  }

  // Role of every state, size state_size().
  virtual std::span<const StateRole> state_roles() const = 0;
  // The nominal magnitude of every state (size state_size(), each finite and > 0), or empty: 1
  // for every state. A state's absolute solver tolerance is the one of its role ([solver]
  // atol_pos or atol_vel, those of a state of nominal 1) times its nominal, so that a state on
  // another scale (a line volume of 1e-7 m³) is resolved like one of size 1; FMI's nominals of
  // continuous states serve the same purpose. Constant within a mode: a subsystem with events may
  // give other nominals in the equations of a mode an event made (Mode::equations(); FMI's
  // nominalsOfContinuousStatesChanged), and the integrator takes them when it enters that mode.
  virtual std::span<const double> state_nominals() const { return {}; }

  // Human-readable names: states and outputs use the physical quantity ("x_17", "v_17") so that
  // result columns of a whole model and of its pieces match.
  virtual std::string state_name(std::size_t i) const = 0;
  virtual std::string output_name(std::size_t i) const = 0;
  virtual std::string input_name(std::size_t i) const = 0;
  // The unit of output i as text ("N", "rad/s"); "" when the model does not say. Informative:
  // the result files' metadata, compare and plot show it; no computation depends on it.
  virtual std::string output_unit(std::size_t i) const {
    (void)i;
    return "";
  }
  // The nominal magnitude of output i (finite and > 0; default 1). The macro-step controller's
  // absolute tolerance of a monitored output is its group's atol ([cosim] atol_pos or atol_vel,
  // those of an output of size 1) times this, as the solver's of a state is (state_nominals).
  // An FMU gives its output variables' `nominal` attributes.
  virtual double output_nominal(std::size_t i) const {
    (void)i;
    return 1.0;
  }
  // The unit of state i; "" when the model does not declare it, and then state_units() below
  // derives one from the outputs. Informative, like output_unit().
  virtual std::string state_unit(std::size_t i) const {
    (void)i;
    return "";
  }
  // One line for people about state i and output i ("angle of inertia 2", "armature current");
  // "" when the model gives none. The result files' metadata carries them beside the units.
  virtual std::string state_description(std::size_t i) const {
    (void)i;
    return "";
  }
  virtual std::string output_description(std::size_t i) const {
    (void)i;
    return "";
  }
  // Whether input i is an effort (a force, a torque, a flow into a node): contributions to it add
  // up, so several connections may feed it and the input is the sum of their coupling variables.
  // A kinematic or signal input (a position, a voltage, a measured value) takes exactly one
  // connection. Default false: a model that does not say (a plugin, an FMU) takes one feed per
  // input; a plugin declares its efforts by overriding this function.
  virtual bool input_is_effort(std::size_t i) const {
    (void)i;
    return false;
  }

  // Consistent initial state at t0 with inputs u0 (size input_size()).
  virtual double initial_time() const = 0;
  virtual void initial_state(std::span<const double> u0, std::span<double> z0,
                             std::span<double> zp0) const = 0;

  // r = F(t, z, z', u). All spans have the sizes above.
  virtual void residual(double t, std::span<const double> z, std::span<const double> zp,
                        std::span<const double> u, std::span<double> r) const = 0;

  virtual const SparsityPattern& jacobian_pattern() const = 0;

  // values[k] = (dF/dz + cj * dF/dz')[row_index[k], column], in the order of jacobian_pattern().
  virtual void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                        std::span<const double> u, double cj, std::span<double> values) const = 0;

  // y = y(t, z[, u]); u is ignored unless has_feedthrough().
  virtual void outputs(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> y) const = 0;

  // The feed-through block D = ∂y/∂u at (t, z, u), dense column-major: values[c * output_size()
  // + r] = ∂y_r/∂u_c (size output_size() * input_size()). The master's consistent update
  // (METHODS §1.1, D-1, seed 000 Eq. 2.22) uses it as the Newton matrix of its coupling
  // equations, and for outputs affine in u (outputs_affine_in_inputs()) also to move the outputs
  // at the end state to other inputs: y(u) = y(u_end) + D·(u − u_end). Only called if
  // has_feedthrough(). Default: central differences of outputs() (steps 1e-7·max(1, |u_c|);
  // exact up to rounding for affine outputs); a model may give it analytically.
  virtual void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                                    std::span<double> values) const;

  // Whether outputs() is affine in u for every fixed (t, z): y(u) = y(u_0) + D·(u − u_0) with a D
  // that does not depend on u. Then the master's consistent update shifts the outputs with D
  // (exact, no further message to the subsystem); otherwise it asks the subsystem for y and D at
  // every Newton iterate (the output evaluation, executors::Executor::evaluate_outputs). Only
  // read if has_feedthrough(). Default false: a model that does not say is evaluated, never
  // linearised (a wrong true here makes the update first order in the inputs' change).
  virtual bool outputs_affine_in_inputs() const { return false; }

  // For the sap interface Jacobian of the implicit scheme (METHODS.md §4.5, D-20; seed 000
  // App. A): with equations of motion M v' = h + B u, the direct effect of every input on the
  // acceleration of the bodies the outputs describe. Fills accel[o * input_size() + k] =
  // (M⁻¹B)_{body(o), k} (0 if input k does not load that body) and roles[o] = kPosition or
  // kVelocity for an output that is a body's position or velocity (kOther: its sensitivity is
  // taken as 0). Sizes: output_size() * input_size() and output_size(). Returns false if the
  // model cannot say; sap is then unavailable for it (the default).
  virtual bool input_acceleration(std::span<double> accel, std::span<StateRole> roles) const {
    (void)accel;
    (void)roles;
    return false;
  }

  // The discrete part of a hybrid subsystem (events.hpp), or nullptr for a purely continuous one
  // (the default). Owned by the subsystem; valid as long as it.
  virtual const Events* events() const { return nullptr; }

  // Optional Jacobians with respect to the coupling, for assembling subsystems and coupling laws
  // into one system (system::MonolithicSystem, METHODS.md §1.1 Eq. 2.4): ∂y/∂z
  // (output_size() × state_size()) and ∂F/∂u (state_size() × input_size()). Like
  // jacobian_pattern(), the patterns are fixed at construction (callers read them once) and
  // contain every entry that can be nonzero; the values come in pattern order.
  //
  // Default, for models that do not provide them (users' plugins): dense patterns and central
  // finite differences of outputs() / residual() with steps 1e-7·max(1, |value|), i.e. about
  // eight significant digits: enough for a Newton matrix, not for a regression value. A model
  // with analytic derivatives overrides all four functions together.
  virtual EntryPattern output_jacobian_pattern() const;
  virtual void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                               std::span<double> values) const;
  virtual EntryPattern input_jacobian_pattern() const;
  virtual void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                              std::span<const double> u, std::span<double> values) const;
};

// The output evaluation of the consistent update (METHODS §1.1, D-1): y = outputs(t, z, u) and,
// for a subsystem with feed-through, d = feedthrough_jacobian(t, z, u) (d is emptied otherwise).
// Resizes y and d. Throws std::runtime_error naming the output (and input) whose value is not
// finite; a model's own exception passes through. Used by the worker's runner at T_{N+1} and by
// the master at t0, so both check and report alike.
void evaluate_outputs(const Subsystem& s, double t, std::span<const double> z,
                      std::span<const double> u, std::vector<double>& y, std::vector<double>& d);

// The unit of every state of `s`: the model's own (Subsystem::state_unit) where it declares one;
// else the unit of the output named like the state; else, for a position or velocity state, the
// one unit that every output named like a state of that role has (the chain's x_17 is "m"
// because its outputs x_1 and x_40 are); else "". O(states + outputs).
std::vector<std::string> state_units(const Subsystem& s);

// The time function of a subsystem's inputs, supplied by the caller of the integrator
// (a support-point polynomial in co-simulation, nothing for a closed model).
// evaluate() must be deterministic and callable from the integrator's thread.
class InputFunction {
 public:
  virtual ~InputFunction() = default;
  virtual void evaluate(double t, std::span<double> u) const = 0;
  // The degree of the polynomial in t that evaluate() follows everywhere (also outside the
  // step), or -1 when it is not one or the function does not say. The integrator's history
  // shift (ida::AdvanceControl::previous_input) samples the difference of two inputs with that
  // many points.
  virtual int polynomial_degree() const { return -1; }
};

}  // namespace macrostep::model
