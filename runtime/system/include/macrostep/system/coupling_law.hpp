// A coupling law of the coupled system (METHODS.md §1.1, §1.4; seed 000 Eq. 2.4, 2.20-2.25):
// u_law = φ(y_law), evaluated by the master from subsystem outputs. A spring/damper of a cut
// element, a hydraulic node or a signal connection is one law each; the CoupledSystem owns the
// laws, gives their coupling variables global indices and wires them to subsystem inputs.
#pragma once

#include <cstddef>
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
//  - evaluate() and jacobian() are pure functions of y_read (no hidden state): a const law is
//    shared by every thread of the master.
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
};

}  // namespace macrostep::system
