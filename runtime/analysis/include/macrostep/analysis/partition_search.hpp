// Cut positions for a chain from a trial run (`macrostep suggest-partition`; beyond
// the seeds). The model predicts the wall time of an explicit co-simulation of the chain cut at
// given boundaries from two measurements, and searches the boundaries that minimise it:
//
//   * cut indicators: for every interior element e, how many macro steps the error controller
//     would take if e were a cut. The coupling variable of a cut is the element's force; its
//     local coupling error is the error of extrapolating it with a degree-κ polynomial (METHODS
//     §2.2, the quantity exCV estimates, §5.1). On samples λ_k of spacing h, with err_k =
//     |λ_k − P_κ(t_k)| / (atol_u + rtol |λ_k|) (on a uniform grid the (κ+1)-th backward
//     difference), a controller holding err at 1 takes steps H = h err_k^{-1/(κ+1)}, so
//         N_e = Σ_k err_k^{1/(κ+1)}                    (CutIndicatorSampler computes it)
//     Two sources: the element forces of the whole chain in one IDA (every element), and the
//     coupling variables of trial co-simulations at their accepted macro points (the cuts they
//     have: the co-simulation's own error, which the exact solution does not show).
//     and a cut set C takes N(C) = s · max_{e ∈ C} N_e macro steps, where the calibration s
//     makes N(C_trial) equal the trial's measured attempts (safety factor, rejections, the
//     RMS norm over several cuts: everything the indicator leaves out, taken as one factor);
//   * the trial co-simulation of the configured partition: per subsystem its micro steps m_j
//     and solver time. A subsystem that took more than two micro steps per macro step was held
//     by its own dynamics (micro-step rate m_j / t_trial); one that took at most two was held by
//     the macro step and keeps its micro steps per macro step (ν_j = m_j / N_trial). A block of
//     a new partition takes the micro steps of its most demanding mass (multirate: the stiffest
//     body sets the step of its whole subsystem, seed 000 §5.4):
//         m_b = max(N(C), max_{i ∈ b} [ν_i ≤ 2 ? ν_i N(C) : rate_i t_trial]),
//     each costing c(n) = c0 + c1 n seconds for n masses (least squares over the trial's
//     subsystems; KLU's cost grows linearly with a chain segment), times (1 + extra), the trial's
//     share of comparison and perturbed runs;
//   * the wall time on P cores: T = N(C) o + the makespan of the loads S_b = (1 + extra) m_b
//     c(n_b) scheduled on P cores longest first (each subsystem on its own core when P >= the
//     blocks: the largest load), o the trial's master and communication time per attempt.
//
// The search: for every threshold θ on N_e (up to 200 of them), only elements with N_e <= θ may
// be cut; a bisection on the largest block load, with a greedy fill that cuts as late as an
// allowed element permits (optimal for loads that grow with the block), finds the cuts with the
// least largest load; every candidate and the trial's own cuts are scored with T, the best is
// returned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace macrostep::analysis {

// One subsystem of the trial run: masses [first, last) (0-based), its micro steps and nominal
// solver time over the trial.
struct TrialSubsystem {
  std::size_t first = 0, last = 0;
  double micro_steps = 0.0;
  double solver_s = 0.0;
};

// What the trial co-simulation of the configured partition measured (over [0, duration]).
struct TrialRun {
  double duration = 0.0;                   // simulated time [s] (> 0)
  double attempts = 0.0;                   // macro-step attempts, accepted and rejected (> 0)
  double overhead_per_attempt_s = 0.0;     // master and communication time per attempt
  double extra_share = 0.0;                // extra-run time / nominal solver time (>= 0)
  std::vector<TrialSubsystem> subsystems;  // in chain order, covering [0, n) without gaps
};

// The model above, built from a trial and the cut indicators of one chain.
class PartitionModel {
 public:
  // `indicators`: N_e for every element 0..n (element e joins masses e-1 and e; entries 0 and
  // n, the walls, are ignored), n = the trial's last mass. `cores` >= 1. Throws
  // std::invalid_argument for inconsistent input (gaps in the trial's subsystems, sizes).
  PartitionModel(TrialRun trial, std::vector<double> indicators, unsigned cores);

  std::size_t masses() const { return rate_.size(); }
  double calibration() const { return calibration_; }
  double cost_per_step(std::size_t masses) const { return c0_ + c1_ * static_cast<double>(masses); }

  // The prediction for boundaries [0, b_1, ..., n] (strictly increasing).
  struct Prediction {
    std::vector<std::size_t> boundaries;
    double macro_steps = 0.0;
    std::vector<double> micro_steps;  // per block
    std::vector<double> load_s;       // per block: solver time with its extra runs
    // Block indices per core in the longest-first schedule (one entry per used core).
    std::vector<std::vector<std::size_t>> schedule;
    double wall_s = 0.0;
    // 1 − mean load / largest load: the share of the subsystems' time spent waiting for the
    // slowest (seed 000 Eq. 4.5's idle time, with every subsystem on its own core).
    double idle_share = 0.0;
  };
  Prediction predict(const std::vector<std::size_t>& boundaries) const;

  // The best prediction found for `subsystems` contiguous blocks (2 <= subsystems <= n).
  Prediction search(std::size_t subsystems) const;

 private:
  double block_micro_steps(std::size_t first, std::size_t last, double macro_steps) const;
  double block_load(std::size_t first, std::size_t last, double macro_steps) const;
  // Cuts into exactly `subsystems` blocks at allowed elements with every block's
  // load <= limit; empty if there are none.
  std::vector<std::size_t> fill(std::size_t subsystems, const std::vector<bool>& allowed,
                                double macro_steps, double limit) const;
  std::vector<std::size_t> least_largest_load(std::size_t subsystems,
                                              const std::vector<bool>& allowed,
                                              double macro_steps) const;

  TrialRun trial_;
  std::vector<double> indicators_;
  unsigned cores_;
  std::vector<double> rate_;       // per mass: own micro-step rate [1/s], or 0 if macro-bound
  std::vector<double> per_macro_;  // per mass: micro steps per macro step if macro-bound, else 0
  double calibration_ = 1.0;
  double c0_ = 0.0, c1_ = 0.0;
};

// Accumulates N_e of every channel (an element's force, or a trial's coupling variable) from
// samples at increasing times, uniform or not (a trial's accepted macro points). A sample's error
// for degree κ is the value minus the Lagrange extrapolation through the κ+1 previous samples
// (polynomials::lagrange_basis, the predictor of METHODS §2.2). With order control the controller
// picks the order whose step is largest, so a sample counts min over κ in [kappa_min,
// kappa_max] of err_κ^{1/(κ+1)}; the first kappa_max + 1 samples only fill the history.
class CutIndicatorSampler {
 public:
  // 0 <= kappa_min <= kappa_max <= 5; rtol > 0, atol > 0 (the co-simulation's rtol and atol_u).
  CutIndicatorSampler(std::size_t channels, int kappa_min, int kappa_max, double rtol, double atol);
  // The values of every channel at time t (later than the previous sample's).
  void add(double t, const std::vector<double>& values);
  const std::vector<double>& indicators() const { return sum_; }
  std::size_t samples() const { return samples_; }  // samples counted (after the history)

 private:
  int kappa_min_, kappa_max_;
  double rtol_, atol_;
  std::vector<double> times_;                   // the previous kappa_max + 1 times, oldest first
  std::vector<std::vector<double>> values_;     // per channel its values at times_
  std::array<std::vector<double>, 6> weights_;  // per κ: the Lagrange weights at the new time
  std::vector<double> sum_;
  std::size_t samples_ = 0;
};

// "[40, 10, 40]": the block sizes of boundaries, as the TOML array of [partition] sizes.
std::string sizes_array(const std::vector<std::size_t>& boundaries);

}  // namespace macrostep::analysis
