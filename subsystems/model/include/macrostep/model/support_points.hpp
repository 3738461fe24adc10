// SupportPoints: the message-friendly description of one step polynomial of a subsystem's
// inputs on [T_N, T_{N+1}] (DESIGN.md data flow; METHODS §2.2, D-3).
//
//   p_{N+1}(t; s) = P_κ(t; [T_{N−κ+1}, u_{N−κ+1}], …, [T_N, u_N], [T_{N+1}, s])
//                 = p_{N+1}(t; 0) + s·ℓ_{N+1}(t)
//
// Layout: degree κ, node times time[0..κ] strictly increasing with time[κ] = T_{N+1} (the end
// node), node values value[c][0..κ] per input channel c, value[c][κ] = the end support value
// s_c. step_begin = T_N is carried for the receiver (for κ = 0 it is not a node).
//
// The struct is trivially copyable and standard-layout, with fixed capacity, so that it can be
// copied byte-wise (the worker protocol packs its used part into ring messages). Unused slots are
// zero; a value built by the builders in builders.hpp is fully initialised, so byte-wise equality
// of two SupportPoints built from the same data holds.
//
// evaluate() is on the solver's hot path (every residual evaluation): it does not allocate,
// does not throw, and returns bit-identical results for the same struct contents and t.
// It evaluates the Lagrange basis in product form on the real non-uniform nodes and
// extrapolates outside them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::model {

struct SupportPoints {
  // Degree up to 6: κ_max = 5 plus the exLE comparison polynomial of degree κ+1.
  static constexpr std::size_t kMaxNodes = 7;
  static constexpr int kMaxDegree = static_cast<int>(kMaxNodes) - 1;
  // Inputs per subsystem (the chain has 2; D/D two-mass has 2 per side).
  static constexpr std::size_t kMaxChannels = 8;

  std::int32_t degree = 0;     // κ, 0..kMaxDegree
  std::uint32_t channels = 0;  // number of input channels, 0..kMaxChannels (0: no inputs)
  double step_begin = 0.0;     // T_N
  std::array<double, kMaxNodes> time{};
  std::array<std::array<double, kMaxNodes>, kMaxChannels> value{};

  std::size_t node_count() const { return static_cast<std::size_t>(degree) + 1; }
  std::size_t end_node() const { return static_cast<std::size_t>(degree); }
  double step_end() const { return time[end_node()]; }
  double end_value(std::size_t c) const { return value[c][end_node()]; }
  // Replaces the end support value s_c (FD perturbation, corrector iterate, relaxation).
  void set_end_value(std::size_t c, double s) { value[c][end_node()] = s; }

  // u[c] = p_c(t) for c < channels. Precondition: u.size() == channels (asserted in debug
  // builds; SupportPointInput checks it once when bound). Never throws, never allocates.
  void evaluate(double t, std::span<double> u) const noexcept;

  // ℓ_{N+1}(t) = Π_{j<κ} (t − time[j])/(time[κ] − time[j]); ≡ 1 for κ = 0. Changing the end
  // value of any channel by Δs changes that channel's p(t) by Δs·end_basis(t).
  double end_basis(double t) const noexcept;

  // Throws std::invalid_argument with a message naming the broken rule: degree or channels out
  // of range, node times or values not finite, node times not strictly increasing, or
  // step_begin not T_N (it must equal time[κ−1] for κ > 0 and lie before time[κ]).
  void validate() const;
};

static_assert(std::is_trivially_copyable_v<SupportPoints>,
              "SupportPoints travels through shared-memory rings as plain bytes");
static_assert(std::is_standard_layout_v<SupportPoints>,
              "SupportPoints travels through shared-memory rings as plain bytes");
static_assert(SupportPoints::kMaxDegree >= 6, "κ_max = 5 needs degree-6 comparison polynomials");

// Adapter: a SupportPoints as the integrator's InputFunction (model/subsystem.hpp). It
// references the support points; they must outlive it and may be reassigned in place between
// integrations (not during one).
class SupportPointInput final : public model::InputFunction {
 public:
  // Throws std::invalid_argument if points.channels != input_size or points are invalid.
  SupportPointInput(const SupportPoints& points, std::size_t input_size);
  void evaluate(double t, std::span<double> u) const override { points_->evaluate(t, u); }
  int polynomial_degree() const override { return points_->degree; }
  const SupportPoints& points() const { return *points_; }

 private:
  const SupportPoints* points_;
};

}  // namespace macrostep::model
