// The "heun" interface Jacobian (seed 004 Eq. 49/50; heun.hpp): ∂y/∂s from one Heun step of
// the subsystems linearised at the accepted T_N state and inputs, without perturbed runs. It
// depends on T_N, H and κ only, so it is filled once per attempt and every pass assembles J
// from it at the pass's outputs. It misses direct feed-through.
#include <memory>

#include "macrostep/corrector/heun.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"

namespace macrostep::corrector {
namespace {

class HeunStrategy final : public InterfaceJacobianStrategy {
 public:
  JacobianTraits traits() const override {
    JacobianTraits t;
    t.feedthrough = false;
    t.perturbed_runs = false;
    return t;
  }
  void start(const system::CoupledSystem& system) override {
    system_ = &system;
    heun_ = std::make_unique<HeunSensitivities>(system);
    matrix_ = std::make_unique<NewtonMatrix>(system);
    const std::size_t ns = system.subsystem_count();
    z_n_.assign(ns, {});
    u_n_.assign(ns, {});
    for (std::size_t i = 0; i < ns; ++i) {
      z_n_[i].assign(system.subsystem(i).state_size(), 0.0);
      u_n_[i].assign(system.subsystem(i).input_size(), 0.0);
    }
  }
  bool wants_perturbed_runs(const control::StepPlan& /*plan*/) const override { return false; }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    count_evaluation();
    if (!matrix_->assemble(pass)) return false;
    matrix_->newton_step(residual, s);
    return true;
  }

 protected:
  // κ = 0: the step polynomial is constant.
  void on_begin_attempt(const AttemptView& attempt) override {
    const std::span<const double> u = attempt.history.newest_values();
    for (std::size_t i = 0; i < system_->subsystem_count(); ++i) {
      attempt.accepted_state(i, z_n_[i]);
      system_->gather_inputs(i, u, u_n_[i]);
    }
    heun_->fill(attempt.plan.t_begin, attempt.plan.h(), attempt.plan.kappa == 0, z_n_, u_n_,
                matrix_->sensitivities());
  }

 private:
  const system::CoupledSystem* system_ = nullptr;
  std::unique_ptr<HeunSensitivities> heun_;
  std::unique_ptr<NewtonMatrix> matrix_;
  std::vector<std::vector<double>> z_n_, u_n_;  // T_N states and inputs
};

}  // namespace

void register_heun_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kHeun),
               "one Heun step of the linearised subsystems, no perturbed runs (004)",
               [](const CorrectorOptions&) { return std::make_unique<HeunStrategy>(); });
}

}  // namespace macrostep::corrector
