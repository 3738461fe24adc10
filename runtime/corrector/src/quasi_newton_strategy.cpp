// The "quasi-newton" interface Jacobian (IQN-ILS, beyond the seeds; secant_history.hpp): the
// fd Jacobian (METHODS.md §4.2) while no secant information exists (the first step, and after
// a corrector failure, which clears it), secant updates from the corrector history otherwise
// (no perturbed runs), and a relaxed fixed-point step when the history gives no usable column.
// A multiplier has no fixed-point map for the secant update (no constraints); the secant
// columns are not part of the scheme's exported state (no checkpoints).
#include <algorithm>
#include <memory>

#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"
#include "macrostep/corrector/secant_history.hpp"

namespace macrostep::corrector {
namespace {

class QuasiNewtonStrategy final : public InterfaceJacobianStrategy {
 public:
  explicit QuasiNewtonStrategy(const CorrectorOptions& options)
      : omega_(options.omega), reuse_attempts_(options.quasi_newton_reuse) {}
  JacobianTraits traits() const override {
    JacobianTraits t;
    t.constraints = false;
    t.checkpoint = false;  // the secant columns
    return t;
  }
  void start(const system::CoupledSystem& system) override {
    const std::size_t nc = system.coupling_count();
    secant_ = std::make_unique<SecantHistory>(nc, std::max<std::size_t>(nc, 1),
                                              static_cast<std::size_t>(reuse_attempts_));
    matrix_ = std::make_unique<NewtonMatrix>(system);
  }
  bool wants_perturbed_runs(const control::StepPlan& /*plan*/) const override {
    return secant_->columns() == 0;
  }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    secant_->add(residual, pass.image);
    if (!pass.perturbed) {
      if (!secant_->step(s)) {  // no secant information: a relaxed fixed-point step
        for (std::size_t k = 0; k < s.size(); ++k) s[k] += omega_ * residual[k];
      }
      return true;
    }
    matrix_->set_forward_differences(pass);
    count_evaluation();
    if (!matrix_->assemble(pass)) return false;
    matrix_->newton_step(residual, s);
    return true;
  }
  void end_attempt(bool corrector_failed) override {
    if (!corrector_failed) return;
    matrix_->invalidate();
    secant_->clear();
  }

 protected:
  void on_begin_attempt(const AttemptView& /*attempt*/) override { secant_->begin_attempt(); }

 private:
  double omega_;
  int reuse_attempts_;
  std::unique_ptr<SecantHistory> secant_;
  std::unique_ptr<NewtonMatrix> matrix_;
};

}  // namespace

void register_quasi_newton_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kQuasiNewton),
               "IQN-ILS secant updates; fd on the first step and after a failure",
               [](const CorrectorOptions& o) { return std::make_unique<QuasiNewtonStrategy>(o); });
}

}  // namespace macrostep::corrector
