// The "fd" interface Jacobian (METHODS.md §4.2; seed 000 Eq. 2.30): every pass that a next
// iterate follows runs one perturbed integration per subsystem input, and J is assembled anew
// from their forward differences (full Newton with an FD Jacobian, §4.1).
#include <memory>

#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"

namespace macrostep::corrector {
namespace {

class FdStrategy final : public InterfaceJacobianStrategy {
 public:
  JacobianTraits traits() const override {
    JacobianTraits t;
    t.exact = true;
    return t;
  }
  void start(const system::CoupledSystem& system) override {
    matrix_ = std::make_unique<NewtonMatrix>(system);
  }
  bool wants_perturbed_runs(const control::StepPlan& /*plan*/) const override { return true; }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    bool evaluated = false;
    const bool ok = matrix_->finite_difference_iterate(pass, residual, s, evaluated);
    if (evaluated) count_evaluation();
    return ok;
  }
  void end_attempt(bool corrector_failed) override {
    if (corrector_failed) matrix_->invalidate();
  }

 private:
  std::unique_ptr<NewtonMatrix> matrix_;
};

}  // namespace

void register_fd_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kFiniteDifference),
               "finite differences of one perturbed run per input, every pass (§4.2)",
               [](const CorrectorOptions&) { return std::make_unique<FdStrategy>(); });
}

}  // namespace macrostep::corrector
