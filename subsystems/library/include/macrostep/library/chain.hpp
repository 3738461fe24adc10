// The oscillator chain as a Subsystem (spec/MODELS.md §1, seed 000 §2.2-2.3).
//
// A ChainSegment holds masses [first, last) of a chain (0-based). The whole chain is the
// segment [0, n) and has no inputs. A cut segment replaces its end elements by inputs
// (seed 000 Eq. 2.16): if first > 0 its first body receives -lambda_left instead of
// -F_SD(element first); if last < n its last body receives +lambda_right instead of
// +F_SD(element last). Inputs are ordered [lambda_left (if any), lambda_right (if any)].
// Outputs are the coupling-body states y = [x_first, x_last-1, v_first, v_last-1]
// (seed 000 Eq. 2.16-2.20; no feed-through).
//
// Names use global 1-based indices: states "x_17", "v_17"; outputs "x_<first+1>", "x_<last>",
// "v_<first+1>", "v_<last>". A segment does not know its cut number L, so an input is named
// after the cut element it replaces (1-based element index i, element i joins masses i-1 and i):
// "lambda@<first+1>" (left), "lambda@<last+1>" (right). The runtime maps them to lambda_L.
//
// State layout (interleaved, so the Jacobian is banded with bandwidth 3):
//   z = [x_first, v_first, x_first+1, v_first+1, ...]
// Residual (IDA form): F_x = x' - v;  F_v = m v' - (-F_SD,k + F_SD,k+1 + F_EXT,k).
// The segment keeps a copy of the parameters it needs; it is immutable after construction.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::library {

class ChainSegment final : public model::Subsystem {
 public:
  // Throws std::invalid_argument unless 0 <= first < last <= params.size().
  ChainSegment(const ChainParameters& params, std::size_t first, std::size_t last);

  std::size_t first_mass() const { return first_; }  // 0-based global index
  std::size_t last_mass() const { return last_; }    // one past the end
  std::size_t masses() const { return last_ - first_; }
  bool has_left_input() const { return has_left_; }
  bool has_right_input() const { return has_right_; }

  std::size_t state_size() const override { return 2 * masses(); }
  std::size_t input_size() const override;
  std::size_t output_size() const override { return 4; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override;
  std::string output_name(std::size_t i) const override;
  // x_k m, v_k m/s; "position of mass k", "velocity of mass k".
  std::string output_unit(std::size_t i) const override;
  std::string state_unit(std::size_t i) const override;
  std::string state_description(std::size_t i) const override;
  std::string output_description(std::size_t i) const override;
  std::string input_name(std::size_t i) const override;
  bool input_is_effort(std::size_t i) const override;
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;
  // Body 1 receives −λ_left, body n +λ_right (seed 000 Eq. 2.16): ∓1/m of that body.
  bool input_acceleration(std::span<double> accel,
                          std::span<model::StateRole> roles) const override;

  // Analytic coupling Jacobians (model::Subsystem): ∂y/∂z selects states (entries 1);
  // ∂F/∂u has one entry per input in the velocity row of its end body.
  model::EntryPattern output_jacobian_pattern() const override;
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  model::EntryPattern input_jacobian_pattern() const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  // Net force on every body of the segment (the right-hand side m*v'), size masses().
  void body_forces(double t, std::span<const double> z, std::span<const double> u,
                   std::span<double> f) const;

 private:
  std::size_t first_, last_;
  bool has_left_, has_right_;
  std::vector<double> mass_;
  std::vector<ElementLaw> element_;  // masses()+1 elements: element_[k] left of local body k
  std::vector<MassForces> forces_;
  std::vector<std::size_t> forced_;  // local indices of bodies with external forces, ascending,
                                     // terminated by a sentinel (SIZE_MAX): the hot loops skip
                                     // unforced bodies with one comparison
  std::vector<double> x0_, v0_;
  std::vector<model::StateRole> roles_;
  model::SparsityPattern pattern_;
};

// Equal partition of n masses into s subsystems (spec/MODELS.md §1.5): the first n mod s
// subsystems get one mass more. Returns the s+1 boundaries [0, b_1, ..., n].
std::vector<std::size_t> equal_partition(std::size_t n, std::size_t s);

// Partition by explicit sizes (K-5.4b: 40/10 alternating). Throws std::invalid_argument if
// the sizes do not sum to n or one is zero.
std::vector<std::size_t> sized_partition(std::size_t n, const std::vector<std::size_t>& sizes);

}  // namespace macrostep::library
