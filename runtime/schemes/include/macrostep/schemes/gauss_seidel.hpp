// Gauss–Seidel co-simulation (METHODS.md §3.2; seed 001 Eq. 13, 17; seed 000 App. B, C): the
// subsystems run one after another in a configured sequence, and each one's inputs interpolate
// the new outputs of the subsystems that ran before it instead of extrapolating them.
//
// One attempt of a macro step [T_N, T_{N+1}] of degree κ:
//   1. u_pre = P_κ(T_{N+1}) from the accepted history, as the explicit scheme predicts.
//   2. A first pass with every input extrapolated (the Jacobi step): the first subsystem of the
//      sequence is final after it.
//   3. For every later subsystem S of the sequence, the end values at T_{N+1} of those of its
//      inputs whose coupling law reads only outputs of subsystems that already ran (and possibly
//      S's own outputs) become u_c = φ_c(y_{N+1}); the input polynomial is the Lagrange
//      interpolation of degree κ through T_{N−κ+1}..T_N and that end value (step_polynomial, the
//      same support-point form as the explicit step). Inputs whose law reads a subsystem still to
//      run keep the extrapolation. One pass with the new polynomials makes S final.
//      A law that also reads S's own outputs (force/force: the spring between both bodies) makes
//      the end value depend on S's result; GaussSeidelOptions::end_value chooses it (the
//      stability analysis of runtime/analysis has both, stability.hpp and coupled_stability.hpp,
//      and agrees with either step for step):
//      sequential (seed 000 App. C): φ is evaluated once, with S's own outputs extrapolated to
//      T_{N+1} by the Lagrange polynomial of degree κ through S's outputs at the accepted points
//      T_{N−κ} … T_N (the first: the initial outputs), which the scheme keeps (export_state: a
//      checkpoint carries them); one pass with that end value makes S final. S's run in the
//      Jacobi pass does not enter the value, so, as in the seed's scheme, nothing is iterated:
//      each subsystem's result is one run with inputs known before it started;
//      converged (the default): S is repeated with φ evaluated at its previous result until it
//      converges. Converged: the change that remains in every such end value,
//      estimated from the last change Δ_k and the iteration's contraction rate q = Δ_k/Δ_{k−1}
//      as Δ_k·q/(1 − q) (q = 1/2 after the first repetition), is at most tolerance·w_c with
//      w_c = min(atol_u_c, rtol·s_c) + rtol·|u_c|, s_c the largest |u_c| over the history: the
//      user's coupling weights with the absolute part capped at rtol times the variable's own
//      magnitude (atol_u = 1e4·rtol by default would otherwise let a force of a few newtons
//      settle to 1e-4 of itself). The estimate, in units of w_c, is the attempt's
//      iteration_residual. Stopping on max_passes, or on a repetition that no longer contracts
//      (q ≥ 1 twice in a row), is a corrector failure (counted, warned about at the end of
//      the run; in fixed mode the step is accepted as it is, as in the implicit scheme).
//   4. The consistent update u_{N+1} = φ(y_{N+1}(u_{N+1})) (D-1; FeedthroughUpdate, as in the
//      explicit Jacobi scheme): without feed-through u_{N+1} = φ(y_{N+1}); with it Newton from
//      the inputs the final runs ended with. exCV monitors u_pre against it.
//
// Direct feed-through (seed 000 App. B; METHODS §1.2 Eq. 2.7, §3.2): force/displacement with
// the base-excited subsystem's output λ = c_c(x2 − x̃1) + d_c(v2 − ṽ1). Force-driven first: the
// base-excited subsystem interpolates x̃1, ṽ1 through the new x1, v1 (its λ is then consistent
// already), as runtime/analysis's recurrence. Base-excited first: the force-driven subsystem
// interpolates λ through the base-excited one's new output, which it evaluated with its
// extrapolated x̃1, ṽ1 (the only λ at T_{N+1} known before the force-driven subsystem runs); the
// consistent update then replaces that value in the history by λ with x̃1 = x1, ṽ1 = v1.
//
// Every pass integrates every subsystem from T_N (executor.hpp): the subsystems whose inputs did
// not change repeat their run bit for bit, so the result does not depend on the executor
// (contract 1), at the price of n_s passes per macro step instead of a run per subsystem.
// Continuous approximations (seed 001 §2, Fig. 1): with c0, c1 or a seed-003 set without rates
// the extrapolated inputs (the whole first pass, and later inputs whose law waits for a
// subsystem still to run) take that approximation of order κ, and the interpolated ones stay
// the Lagrange interpolation of Eq. 13: the runtime/analysis recurrence of the same method.
// Scope (D-10): a fixed macro-step size; estimator none or exCV.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

class GaussSeidel final : public MacroStepScheme {
 public:
  // Throws std::invalid_argument for a controlled step size, a comparison estimator, an
  // approximation that needs rates, or a sequence that is not a permutation of the subsystems.
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                        PassRunner& runner) override;
  // Sequential end values: an accepted attempt's outputs join the kept output histories.
  void concluded(bool accepted) override;
  // Sequential end values with a law that reads the subsystem taking it: state[0] the times of
  // the kept accepted points (oldest first), then per such subsystem (index order) its outputs at
  // each of them. Otherwise no state.
  std::vector<std::vector<double>> export_state() const override;
  void import_state(const std::vector<std::vector<double>>& state) override;
  // Sequential end values: the kept output histories become the given outputs (the newest κ+1).
  void assume_exact_past(std::span<const double> times,
                         std::span<const std::vector<std::vector<double>>> outputs) override;
  void at_event(std::span<const std::vector<double>> outputs_after) override;

 private:
  const system::CoupledSystem* system_ = nullptr;
  SchemeOptions options_;
  std::vector<std::size_t> sequence_;
  // Per coupling variable: the subsystems its law reads (sorted, unique).
  std::vector<std::vector<std::size_t>> reads_;
  std::vector<executors::SubsystemCommand> commands_;
  std::vector<model::SupportPoints> feed_nominal_;  // the nominal polynomials over the feeds
  std::vector<double> u_pre_, u_end_, u_eval_;
  std::vector<double> delta_;  // per coupling variable: its change in the previous repetition
  std::vector<std::vector<double>> outputs_;
  std::vector<std::size_t> sel_;
  // Per coupling variable: its approximation, when any is not Lagrange (else empty).
  std::vector<const polynomials::Approximation*> approximation_;
  std::vector<bool> interpolated_;  // per coupling variable: takes its new value this attempt
  FeedthroughUpdate update_;
  // Sequential end values: per subsystem, the outputs at the last κ+1 accepted points when a law
  // it takes may read it (else empty); the attempt's outputs until concluded() takes them.
  std::vector<std::optional<polynomials::CouplingHistory>> own_outputs_;
  std::vector<std::vector<double>> pending_outputs_;
  double pending_time_ = 0.0;
  bool pending_ = false;
  std::vector<std::vector<double>> sequential_outputs_;  // outputs_ with S's extrapolated

  // Subsystem i's step polynomial: `interpolated` channels through their new end values u_end_
  // (Lagrange), the others extrapolated with their approximation.
  void build_command(std::size_t i, const polynomials::CouplingHistory& history, int kappa,
                     double t_end, const std::vector<bool>& interpolated);
  // The same over the coupling variables feeding subsystem i, into feed_nominal_[i].
  void build_feed_polynomial(std::size_t i, const polynomials::CouplingHistory& history, int kappa,
                             double t_end, const std::vector<bool>& interpolated);
  // Whether coupling c may take a new end value once the subsystems in `ran` have run, when
  // subsystem s runs next; `self` tells whether its law reads s.
  bool interpolates(std::size_t c, std::size_t s, const std::vector<bool>& ran, bool& self) const;
  // The weight w_c of coupling c's remaining change (GaussSeidelOptions::tolerance) at value u.
  double weight(std::size_t c, const polynomials::CouplingHistory& history, double u) const;
  // Step 3 for subsystem s (the repetitions); false when a pass failed.
  bool settle(std::size_t s, const polynomials::CouplingHistory& history, int kappa, double t1,
              const std::vector<bool>& ran, const std::function<bool()>& run_pass,
              AttemptResult& result);
  // Step 3 for subsystem s with sequential end values (one pass); false when a pass failed.
  bool run_sequential(std::size_t s, const polynomials::CouplingHistory& history, int kappa,
                      double t1, const std::vector<bool>& ran,
                      const std::function<bool()>& run_pass, AttemptResult& result);
  // Sequential end values: the output histories, from the initial outputs at t_start.
  void start_own_outputs();
};

}  // namespace macrostep::schemes
