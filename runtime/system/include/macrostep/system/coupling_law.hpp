// A coupling law of the coupled system (METHODS.md §1.1, §1.4; seed 000 Eq. 2.4, 2.20-2.25):
// u_law = φ(y_law), evaluated by the master from subsystem outputs. A spring/damper of a cut
// element, a hydraulic node or a signal connection is one law each; the CoupledSystem owns the
// laws, gives their coupling variables global indices and wires them to subsystem inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace macrostep::system {

// One output of one subsystem: outputs[subsystem][output] in the master's output vectors.
struct OutputRef {
  std::size_t subsystem = 0;
  std::size_t output = 0;
};

// Contract for implementers:
//  - reads() and variable_names() are fixed at construction; the system caches their sizes.
//  - evaluate() and jacobian() are pure functions of y_read and of the law's accepted state
//    (below; most laws have none): between two accept() calls a law gives one answer per y_read,
//    and a const law is shared by every thread of the master.
//  - The floating-point operations of evaluate() are the law's own and run in a fixed order,
//    so that one configuration gives one result however the subsystems ran (contract 1).
class CouplingLaw {
 public:
  virtual ~CouplingLaw() = default;

  // The outputs φ reads, in the order of y_read below (n_in = reads().size()).
  virtual std::span<const OutputRef> reads() const = 0;

  // One name per coupling variable the law writes ("lambda_3"), also the result column. Their
  // count n_out is the law's share of u; the CoupledSystem assigns the global indices
  // (consecutive, in law order).
  virtual std::span<const std::string> variable_names() const = 0;
  std::size_t write_count() const { return variable_names().size(); }

  // The unit of every variable the law writes (write_count() entries, "" where it cannot say),
  // given the units of the outputs it reads (read_units[k]: the unit of reads()[k] as its model
  // reports it, "" if not). Results label their coupling columns with it. Default: all "".
  virtual std::vector<std::string> variable_units(std::span<const std::string> read_units) const {
    (void)read_units;
    return std::vector<std::string>(write_count());
  }
  // One line for people about every variable the law writes (write_count() entries, "" where
  // it says nothing): what it is and its sign convention. Results carry it beside the unit.
  virtual std::vector<std::string> variable_descriptions() const {
    return std::vector<std::string>(write_count());
  }

  // φ: u_out = φ(y_read); y_read.size() == n_in, u_out.size() == n_out.
  virtual void evaluate(std::span<const double> y_read, std::span<double> u_out) const = 0;

  // ∂φ/∂y at y_read, dense row-major n_out × n_in (row: written variable, column: read output
  // in the order of reads()). The implicit scheme assembles the sparse interface Jacobian of
  // the whole system from these blocks (METHODS §4.2).
  virtual void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const = 0;

  // True if φ also depends on u itself (g = u − φ(y, u) has an algebraic loop through the law),
  // so that the consistent update must solve the static coupling equations (seed 000 Eq. 2.22)
  // instead of evaluating u = φ(y) (Eq. 2.25, D-1).
  virtual bool has_feedthrough() const = 0;

  // A constraint law (seed 004, METHODS §8; JointConstraintLaw): its variables are multipliers
  // that no φ gives but that make constraints g(y) = 0 hold at the macro points. For it,
  // evaluate() returns the residual r = −g(y) and jacobian() ∂r/∂y, and the corrector solves
  // r(y(u)) = 0 where it solves u − φ(y(u)) = 0 for the other laws: the Newton row of such a
  // variable is the other rows' without the identity (J_row = −∂r/∂y·∂y/∂u). Only the implicit
  // and semi-implicit schemes with the fd or reuse Jacobian can solve it; its variables start at
  // 0 and have no rate.
  virtual bool is_constraint() const { return false; }

  // Whether u̇ = dφ/dt follows from y_read alone (seed 003 Eq. 2.9: u̇ = Σ ∂φ/∂y·ẏ, where every
  // ẏ is itself an output, e.g. u = c(x_A − x_B), u̇ = c(v_A − v_B)). A damper's rate needs
  // accelerations, so such a law has none. The seed-003 approximations with b ≠ 0 need it.
  virtual bool has_rate() const { return false; }
  // u̇_out = dφ/dt at y_read; only if has_rate(). The default throws std::logic_error.
  virtual void rate(std::span<const double> y_read, std::span<double> u_dot) const {
    (void)y_read;
    (void)u_dot;
    throw std::logic_error("CouplingLaw::rate: this law has no rate (has_rate() is false)");
  }

  // ---- Accepted state (stateful laws) ----
  // A law may keep state that belongs to the last ACCEPTED macro point (the stepped bulk modulus
  // of a hydraulic node: p^(l−1), V^(l−1); a Newton start). The macro-step pipeline owns the
  // accept/reject decision, so it alone advances that state, through CoupledSystem:
  //   reset_state()   at the start of every run: the law's reference state, from which the
  //                   initial coupling variables u0 are evaluated;
  //   start(y, u0)    the initial point t0 is the first accepted point: y_read there and the
  //                   law's share of u0 (not on a resumed run);
  //   import_state()  instead of start() when a checkpoint is resumed (export_state()'s numbers);
  //   evaluate()/jacobian()/rate() any number of times during an attempt: they read the state
  //                   and never change it, so a rejected attempt leaves no trace and its retry
  //                   sees the same state;
  //   accept(y, u)    once per accepted macro step, after the observers saw the point: y_read
  //                   at the accepted point and u_law the law's accepted values there (what the
  //                   scheme computed, written to the results);
  //   export_state()  between macro steps (checkpoints).
  // The master calls these from the one thread that runs the pipeline, never during an
  // evaluation; every executor runs the same pipeline, so the state follows the same path
  // (contract 1). export_state() followed by import_state() on a fresh law must reproduce the
  // law bit for bit (checkpoint and resume). A law without state keeps all defaults.
  virtual bool is_stateful() const { return false; }
  // True if the law's values depend on the macro grid (which points were accepted), not only on
  // y_read: such a law has no meaning without macro steps (a monolithic run refuses it).
  virtual bool depends_on_macro_grid() const { return false; }
  virtual void reset_state() {}
  virtual void start(std::span<const double> y_read, std::span<const double> u_law) {
    (void)y_read;
    (void)u_law;
  }
  virtual void accept(std::span<const double> y_read, std::span<const double> u_law) {
    (void)y_read;
    (void)u_law;
  }
  virtual std::vector<double> export_state() const { return {}; }
  // Throws std::invalid_argument if `state` is not what export_state() of this law gives.
  virtual void import_state(std::span<const double> state) {
    if (!state.empty()) throw std::invalid_argument("CouplingLaw::import_state: stateless law");
  }

  // What a law counted over the accepted macro steps, for the run's JSON statistics: named
  // histograms, bins[k] = accepted steps with k counted things (the last bin: k or more). Part
  // of the accepted state (export_state carries them). Default: none.
  struct Histogram {
    std::string name;
    std::vector<std::uint64_t> bins;
  };
  virtual std::vector<Histogram> histograms() const { return {}; }
};

}  // namespace macrostep::system
