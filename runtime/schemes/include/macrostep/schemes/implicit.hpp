// Iterative co-simulation schemes on the macro-step pipeline (pipeline.hpp): implicit
// (predictor + Newton corrector), semi-implicit and waveform relaxation (METHODS.md §4.1-4.6,
// §5.1 imMD/imCV, §6; seed 000 §2.4.2-2.4.3; seed 002 §2.4).
//
// One attempt of a planned step [T_N, T_{N+1}] with degree κ:
//   j = 0  predictor: s^0 = u^pre = P_κ(T_{N+1}) (as the explicit scheme); one pass with
//          p(t; s^0), plus (fd Jacobian) one perturbed run per subsystem input whose end value
//          is s_k + Δ_k (METHODS §4.2; Δ^0 from the previous step's correction, D-13).
//   j ≥ 1  corrector passes, each re-integrating every subsystem from the T_N workspace:
//          implicit:      J^j d = −(s^j − φ(y^j)),  s^{j+1} = s^j + d,  Δ = max(|d|, Δλ_min)
//                         J = I − (∂φ/∂y)(∂y/∂s) sparse, KLU (corrector/interface_jacobian.hpp)
//          semi-implicit: one such step, one pass with s^1, then u_{N+1} = φ(y^1) (§4.4)
//          waveform:      s^{j+1} = (1 − ω)φ(y^j) + ω s^j, no perturbed runs (§4.6, D-22)
//   test   §4.3 from the second difference on (D-16): imMD tests the monitored outputs
//          (weights at the predictor outputs, D-15), imCV and fixed-H runs without an estimator
//          test the iterates s (weights W^u at u^pre). A u-type test is known before its pass,
//          so that pass runs without perturbed runs (D-17), and a divergence ends the attempt
//          without one.
//   final_pass = false (implicit only, D-50): after a Newton step s^{j+1}, the pass of s^j is
//          the result when s^j is within τ of the fixed point already: ‖s^{j+1} − s^j‖/(1 − R)
//          < τ, and under imMD also R‖y^j − y^{j−1}‖/(1 − R) < τ for the outputs (the iterates'
//          R); no pass with s^{j+1} is run.
//   result u_{N+1} = s^l and the states of its pass (implicit, waveform); corrector failure
//          (divergence, n_cor^max passes, a singular J) → reject with r = 0.25 (D-26); in
//          fixed-H mode the last pass continues regardless (seed 000 §5.1).
//   estimate imMD: (1 − C^{κ+1}/C^κ)|y^pre − y^l| on the monitored outputs; imCV: |u^pre −
//   u_{N+1}|.
//
// The interface Jacobian of the Newton steps is a strategy (corrector/jacobian_strategy.hpp)
// that the scheme asks the registry for by the name in its options: it decides which passes run
// perturbed runs and makes each next iterate (fd, sap, heun, reuse, quasi-newton, broyden, or one a
// program registers).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "macrostep/corrector/convergence.hpp"
#include "macrostep/corrector/corrector_options.hpp"
#include "macrostep/corrector/jacobian_strategy.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

class IterativeScheme final : public MacroStepScheme {
 public:
  // Throws std::invalid_argument for invalid corrector options (an unregistered jacobian).
  explicit IterativeScheme(corrector::CorrectorOptions options);
  // Throws std::invalid_argument for explicit estimators, a controlled step size without an
  // estimator, or a system the Jacobian strategy cannot serve (constraints, feed-through, sap
  // for a subsystem that cannot supply its input accelerations).
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                        PassRunner& runner) override;
  // An accepted attempt's correction |u_{N+1} − u^pre| becomes the next Δ^0 (METHODS §4.2).
  void concluded(bool accepted) override;
  // Δ^0 of the next step, the last accepted correction |u_N − u_N^pre| (empty before the first
  // accepted step), then the arrays of the Jacobian strategy's export_state() (reuse's and
  // broyden's J; none for fd). import_state takes both back; given Δ^0 alone (one array) it
  // leaves the strategy as it is (scheme auto resets Δ^0 so on a switch). A strategy whose
  // traits().checkpoint is false (quasi-newton's secant history) does not continue
  // bit-identically (checkpoints refuse it).
  std::vector<std::vector<double>> export_state() const override;
  void import_state(const std::vector<std::vector<double>>& state) override;

 private:
  enum class Test : std::uint8_t { kIterates, kOutputs };
  void begin(const control::StepPlan& plan, const polynomials::CouplingHistory& history);
  void build_commands(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                      bool perturbed);
  // ‖δ^j‖ of the test's variables for the pass just run (kOutputs) or the iterate (kIterates).
  double iterate_difference() const;
  double output_difference() const;
  corrector::ConvergenceVerdict judge(double difference, bool fixed);
  bool wants_perturbed_runs(const control::StepPlan& plan) const;
  // D-50, after a Newton step: previous = ‖s^j − s^{j−1}‖, last_iterate_difference_ the next.
  bool integrated_iterate_accepted(double previous);
  bool next_iterate(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                    const executors::PassOutcome& outcome, bool perturbed);
  AttemptResult subsystem_failure(const executors::PassOutcome& outcome);
  AttemptResult finish(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                       PassRunner& runner, bool corrector_failed);

  corrector::CorrectorOptions copt_;
  const system::CoupledSystem* system_ = nullptr;
  SchemeOptions options_;
  // The run's Jacobian strategy; started (and asked) only by the Newton iterations, not by the
  // waveform relaxation.
  std::unique_ptr<corrector::InterfaceJacobianStrategy> strategy_;
  bool newton_ = false;  // the iteration asks strategy_ for its iterates
  corrector::ConvergenceTest test_{0.33, 0.9};
  Test test_kind_ = Test::kIterates;
  std::vector<executors::SubsystemCommand> commands_;
  std::vector<std::size_t> sel_;
  std::vector<double> u_pre_, s_, s_prev_, delta_, phi_, step_;
  std::vector<std::vector<double>> y_;  // outputs of the last pass
  std::vector<double> mon_, mon_prev_, mon_pre_;
  // Δ^0 (METHODS §4.2): |u_N − u_N^pre| of the last accepted step; empty until one (D-13).
  std::vector<double> correction_;
  std::vector<double> pending_correction_;  // of the last attempt, used if it was accepted
  // ‖s^j − s^{j−1}‖ of the newest iterate (0: none yet); kept for the iterate test and D-50
  double last_iterate_difference_ = 0.0;
  double last_output_difference_ = 0.0;  // ‖y^j − y^{j−1}‖ (imMD's test) of this attempt
  int passes_ = 0;
};

}  // namespace macrostep::schemes
