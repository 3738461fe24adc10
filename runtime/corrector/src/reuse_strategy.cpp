// The "reuse" interface Jacobian (beyond the seeds): the fd Jacobian (METHODS.md §4.2), kept
// factorised across passes and steps. A kept J serves an attempt of the same κ whose H lies
// within reuse_step_ratio of the H it was made for; a contraction rate R at or above reuse_rate,
// or a corrector failure, makes it stale, and the next pass runs the perturbed runs for a
// fresh one. The kept J is exported with the scheme's state (checkpoints resume it).
#include <memory>

#include "kept_jacobian.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"

namespace macrostep::corrector {
namespace {

class ReuseStrategy final : public KeptJacobianStrategy {
 public:
  explicit ReuseStrategy(const CorrectorOptions& options)
      : KeptJacobianStrategy(options), step_ratio_(options.reuse_step_ratio) {}
  // A J of the same κ and a near H, not yet found too slow, needs no perturbed runs.
  bool wants_perturbed_runs(const control::StepPlan& plan) const override {
    const double ratio = plan.h() / matrix().h();
    return !(matrix().valid() && matrix().kappa() == plan.kappa && ratio <= step_ratio_ &&
             ratio * step_ratio_ >= 1.0);
  }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    // Without perturbed runs the kept J serves; found too slow after its pass, the attempt fails.
    bool evaluated = false;
    const bool ok = matrix().finite_difference_iterate(pass, residual, s, evaluated);
    if (evaluated) count_evaluation();
    return ok;
  }

 private:
  double step_ratio_;
};

}  // namespace

void register_reuse_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kReuse),
               "fd, kept across passes and steps while it contracts well",
               [](const CorrectorOptions& o) { return std::make_unique<ReuseStrategy>(o); });
}

}  // namespace macrostep::corrector
