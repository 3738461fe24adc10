// How the Newton corrector of the iterative schemes gets its interface Jacobian (METHODS.md §4.1,
// §4.2, §4.5; seed 004 Eq. 49): one strategy object per run, chosen by name from the registry
// (jacobian_registry.hpp). A strategy decides whether a pass needs perturbed runs, makes the
// next iterate s^{j+1} from a pass (a Newton step with a J it assembles from the pass's
// perturbed runs, from sensitivities or keeps from earlier passes, or a secant update), decides
// when a kept J is stale, and counts its J evaluations.
//
// Call order (schemes/implicit.hpp drives it):
//   1. construct (registry factory, from the corrector options); traits() any time, the same
//      for every object of a variant whatever its options
//   2. start(system) once per run, before any attempt; the system outlives the strategy
//   3. per attempt: begin_attempt(); then, in the order of the passes, wants_perturbed_runs()
//      before a pass that a next iterate may follow, next_iterate() after a pass that one
//      follows, observe_rate() after every convergence test; end_attempt() once at the end
//      (also after a subsystem failure)
// The waveform iteration (§4.6) relaxes without a Jacobian: it builds the strategy for its
// traits' checks only and never starts it; no built-in strategy serves it.
// What a strategy keeps across steps (a J, secant columns) it exports between attempts
// (export_state, part of the scheme's exported state and so of checkpoints) where it can;
// traits().checkpoint says whether a strategy resumes bit-identically from that.
// Ownership: the scheme owns its strategy (the factory's unique_ptr); a started strategy keeps
// a reference to the system. Not thread-safe; one strategy serves one scheme.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::corrector {

// What a strategy can serve, known before start() (settings, executors and checks ask).
struct JacobianTraits {
  bool constraints = true;     // systems with constraint couplings (METHODS §8, D-45)
  bool feedthrough = true;     // subsystems with direct feed-through ∂y/∂u
  bool perturbed_runs = true;  // may ask for perturbed runs (1 + inputs runs per subsystem)
  // Resumes bit-identically from its export_state() (a checkpoint carries it in the scheme's
  // exported state): it keeps nothing across steps, or exports all it keeps.
  bool checkpoint = true;
  // Needs every subsystem's input accelerations M⁻¹B (model::Subsystem::input_acceleration;
  // sap, METHODS §4.5): refused before the run for a system with a model that cannot give them.
  bool input_accelerations = false;
  // Its Jacobian is the integrated subsystems' own to within the perturbation's error, so Newton
  // contracts at once: a run that leaves [cosim] final_pass unset ends a converged implicit step
  // without the pass after convergence (D-50); other strategies keep that pass.
  bool exact = false;
};

// The attempt a strategy is asked about: T_N, H and κ in `plan`, the coupling history up to
// T_N, and subsystem i's full state at T_N (accepted_state(i, z), z of the state size).
struct AttemptView {
  const control::StepPlan& plan;
  const polynomials::CouplingHistory& history;
  std::function<void(std::size_t, std::span<double>)> accepted_state;
};

// One pass as next_iterate() sees it.
struct PassView {
  const control::StepPlan& plan;
  const polynomials::CouplingHistory& history;
  // The pass's runs; when `perturbed`, subsystem L's extra run c perturbed the end value of its
  // input channel c by CoupledSystem::feed_max(L, c, perturbation) (METHODS §4.2).
  const executors::PassOutcome& outcome;
  bool perturbed;
  std::span<const double> perturbation;
  std::span<const std::vector<double>> outputs;  // y^j: the nominal outputs per subsystem
  std::span<const double> image;                 // x̃ = φ(y^j)
};

class InterfaceJacobianStrategy {
 public:
  virtual ~InterfaceJacobianStrategy() = default;

  virtual JacobianTraits traits() const = 0;
  // Throws std::invalid_argument if the system cannot give what the strategy needs.
  virtual void start(const system::CoupledSystem& system) = 0;

  // Resets the attempt's evaluation count; may throw std::runtime_error naming a subsystem.
  void begin_attempt(const AttemptView& attempt) {
    evaluations_ = 0;
    on_begin_attempt(attempt);
  }
  // Whether the pass of `plan` about to run must include the perturbed runs (one per
  // subsystem input) that next_iterate() will be given.
  virtual bool wants_perturbed_runs(const control::StepPlan& plan) const = 0;
  // s^{j+1} into `s` (s^j on entry) from the pass and its residual r = −g(s^j) (`residual`,
  // which it may overwrite). False if no iterate can be made (a singular or missing J, D-11).
  virtual bool next_iterate(const PassView& pass, std::span<double> residual,
                            std::span<double> s) = 0;
  // The contraction rate R of the convergence test just made (§4.3).
  virtual void observe_rate(double /*rate*/) {}
  // The attempt ended; after a corrector failure the next attempt starts afresh.
  virtual void end_attempt(bool /*corrector_failed*/) {}
  // J evaluations (assemblies) of the current attempt.
  int evaluations() const { return evaluations_; }

  // What the strategy keeps across steps, between attempts only (after start(); not within an
  // attempt): arrays that import_state() of a strategy of the same name and system, started,
  // takes back so that the next attempts run bit-identically. Default: nothing kept (empty).
  virtual std::vector<std::vector<double>> export_state() const { return {}; }
  // Throws std::invalid_argument for arrays that do not fit (the default: any non-empty one).
  virtual void import_state(const std::vector<std::vector<double>>& state);

 protected:
  virtual void on_begin_attempt(const AttemptView& /*attempt*/) {}
  void count_evaluation() { ++evaluations_; }

 private:
  int evaluations_ = 0;
};

}  // namespace macrostep::corrector
