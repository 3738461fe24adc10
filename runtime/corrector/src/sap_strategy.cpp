// The "sap" interface Jacobian (METHODS.md §4.5, D-19, D-20; sap.hpp): ∂y/∂s from the first
// series term of the input sensitivities, for the pass's κ and H, without perturbed runs. Its
// series knows neither constraints nor feed-through.
#include <memory>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"
#include "macrostep/corrector/sap.hpp"

namespace macrostep::corrector {
namespace {

class SapStrategy final : public InterfaceJacobianStrategy {
 public:
  JacobianTraits traits() const override {
    JacobianTraits t;
    t.constraints = false;
    t.feedthrough = false;
    t.perturbed_runs = false;
    t.input_accelerations = true;
    return t;
  }
  void start(const system::CoupledSystem& system) override {
    sap_ = std::make_unique<SapSensitivities>(system);
    matrix_ = std::make_unique<NewtonMatrix>(system);
  }
  bool wants_perturbed_runs(const control::StepPlan& /*plan*/) const override { return false; }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    sap_->fill(control::error_constants(pass.history, pass.plan.kappa, pass.plan.t_end),
               pass.plan.h(), matrix_->sensitivities());
    count_evaluation();
    if (!matrix_->assemble(pass)) return false;
    matrix_->newton_step(residual, s);
    return true;
  }

 private:
  std::unique_ptr<SapSensitivities> sap_;
  std::unique_ptr<NewtonMatrix> matrix_;
};

}  // namespace

void register_sap_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kSap),
               "first series term of the input sensitivities, no perturbed runs (§4.5)",
               [](const CorrectorOptions&) { return std::make_unique<SapStrategy>(); });
}

}  // namespace macrostep::corrector
