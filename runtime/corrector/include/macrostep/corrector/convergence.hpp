// The corrector's convergence test (METHODS.md §4.3, D-16; seed 000 Eq. 2.31-2.33):
//
//   δ^j = (iterate j) − (iterate j−1),   R^j = ‖δ^j‖_W / ‖δ^{j−1}‖_W
//   converged ⇔ R^j/(1 − R^j)·‖δ^j‖_W < τ
//
// The caller supplies ‖δ^j‖_W (u-type iterates for imCV and waveform, the monitored outputs
// for imMD: which and with which weights is the scheme's business). D-16: the test starts at the
// second difference (R^1 is undefined); ‖δ^j‖ ≤ 1e-6·τ (kRoundingFraction: rounding, whose
// ratio R is noise) counts as converged; R ≥ the divergence threshold (0.9) or a non-finite R
// counts as divergence (corConvFail).
//
// Call order: reset() at the start of every attempt, then add(‖δ^1‖), add(‖δ^2‖), ... once
// per corrector iterate.
//
// integrated_iterate_converged() is the same geometric bound one iterate earlier (D-50): the
// iterate s^j whose pass has run is within τ of the fixed point s* if
//   ‖δ^{j+1}‖_W / (1 − R^{j+1}) < τ,   R^{j+1} = ‖δ^{j+1}‖_W / ‖δ^j‖_W,
// since ‖s^j − s*‖ ≤ Σ_{i>j} ‖δ^i‖ ≈ ‖δ^{j+1}‖/(1 − R). A scheme that accepts s^j with the
// states of its pass needs no further pass with s^{j+1}.
#pragma once

#include <cstdint>

namespace macrostep::corrector {

enum class ConvergenceVerdict : std::uint8_t { kContinue, kConverged, kDiverged };

// previous = ‖δ^j‖_W (≤ 0: none yet, the answer is false), next = ‖δ^{j+1}‖_W; false for a rate
// R at or above `divergence` or a non-finite one; next ≤ kRoundingFraction·τ counts as converged.
bool integrated_iterate_converged(double previous, double next, double tau, double divergence);

class ConvergenceTest {
 public:
  // ‖δ^j‖_W at or below this fraction of τ counts as converged (D-16).
  static constexpr double kRoundingFraction = 1e-6;

  // tau > 0 and 0 < divergence < 1 (std::invalid_argument otherwise).
  ConvergenceTest(double tau, double divergence);
  void reset() {
    count_ = 0;
    previous_ = 0.0;
    rate_ = 0.0;
  }
  // The next difference norm ‖δ^j‖_W, j = count + 1.
  ConvergenceVerdict add(double delta_norm);
  // R of the last add() that had a predecessor (0 before).
  double rate() const { return rate_; }

 private:
  double tau_;
  double divergence_;
  int count_ = 0;
  double previous_ = 0.0;
  double rate_ = 0.0;
};

}  // namespace macrostep::corrector
