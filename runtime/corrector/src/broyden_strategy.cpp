// The "broyden" interface Jacobian (beyond the seeds; docs/design/methods.md §4.9): the fd
// Jacobian (METHODS.md §4.2) made at the first pass and whenever the kept one went stale, and in
// between kept up to date by Broyden's update of each subsystem's ∂y/∂s block from every two
// passes of an attempt (NewtonMatrix::secant_update). A kept J serves attempts of any κ and H:
// the pairs carry it to the new step's sensitivities where the subsystems respond smoothly, and
// where they do not, the contraction rate R at or above reuse_rate, or a corrector failure, makes
// it stale (the next pass runs the perturbed runs). The kept J is exported with the scheme's state
// (checkpoints resume it).
#include <memory>
#include <vector>

#include "kept_jacobian.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"

namespace macrostep::corrector {
namespace {

// D-51: a pair whose output change a kept block misses by more than this share of
// |Δy| + |S Δs| (a factor of 3 either way) updates no block. Such pairs come from a J made for a
// far H or from a response that is not linear over the correction (S-5.7's cubic elements and
// force pulses), and updates from them made the next Newton step worse than the kept J.
constexpr double kSecantTrust = 0.5;

class BroydenStrategy final : public KeptJacobianStrategy {
 public:
  explicit BroydenStrategy(const CorrectorOptions& options) : KeptJacobianStrategy(options) {}
  bool wants_perturbed_runs(const control::StepPlan& /*plan*/) const override {
    return !matrix().valid();
  }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    bool ok = true;
    if (pass.perturbed) {
      bool evaluated = false;
      ok = matrix().finite_difference_iterate(pass, residual, s, evaluated, /*step=*/false);
      if (evaluated) count_evaluation();
    } else if (!matrix().valid()) {
      ok = false;
    } else if (has_pair_start_) {
      ok = matrix().secant_update(pass, outputs_before_, s_before_, s, kSecantTrust).usable;
    }
    // y^j and s^j start the pair of the next pass.
    outputs_before_.assign(pass.outputs.begin(), pass.outputs.end());
    s_before_.assign(s.begin(), s.end());
    has_pair_start_ = ok;
    if (!ok) return false;
    matrix().newton_step(residual, s);
    return true;
  }

 protected:
  void on_begin_attempt(const AttemptView& /*attempt*/) override { has_pair_start_ = false; }

 private:
  bool has_pair_start_ = false;
  std::vector<std::vector<double>> outputs_before_;
  std::vector<double> s_before_;
};

}  // namespace

void register_broyden_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kBroyden),
               "fd when stale, kept up to date in between by Broyden updates from the passes",
               [](const CorrectorOptions& o) { return std::make_unique<BroydenStrategy>(o); });
}

}  // namespace macrostep::corrector
