// The "reuse" interface Jacobian (beyond the seeds): the fd Jacobian (METHODS.md §4.2), kept
// factorised across passes and steps. A kept J serves an attempt of the same κ whose H lies
// within reuse_step_ratio of the H it was made for; a contraction rate R at or above reuse_rate,
// or a corrector failure, makes it stale, and the next pass runs the perturbed runs for a
// fresh one. The kept J is exported with the scheme's state (checkpoints resume it).
#include <memory>
#include <vector>

#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"

namespace macrostep::corrector {
namespace {

class ReuseStrategy final : public InterfaceJacobianStrategy {
 public:
  explicit ReuseStrategy(const CorrectorOptions& options)
      : rate_(options.reuse_rate), step_ratio_(options.reuse_step_ratio) {}
  JacobianTraits traits() const override { return {}; }
  void start(const system::CoupledSystem& system) override {
    matrix_ = std::make_unique<NewtonMatrix>(system);
  }
  // A J of the same κ and a near H, not yet found too slow, needs no perturbed runs.
  bool wants_perturbed_runs(const control::StepPlan& plan) const override {
    const double ratio = plan.h() / matrix_->h();
    return !(matrix_->valid() && matrix_->kappa() == plan.kappa && ratio <= step_ratio_ &&
             ratio * step_ratio_ >= 1.0);
  }
  bool next_iterate(const PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    // Without perturbed runs the kept J serves; found too slow after its pass, the attempt fails.
    bool evaluated = false;
    const bool ok = matrix_->finite_difference_iterate(pass, residual, s, evaluated);
    if (evaluated) count_evaluation();
    return ok;
  }
  void observe_rate(double rate) override {
    if (rate >= rate_) matrix_->invalidate();
  }
  void end_attempt(bool corrector_failed) override {
    if (corrector_failed) matrix_->invalidate();
  }
  // The kept J (a checkpoint resumes it).
  std::vector<std::vector<double>> export_state() const override { return matrix_->export_state(); }
  void import_state(const std::vector<std::vector<double>>& state) override {
    matrix_->import_state(state);
  }

 private:
  double rate_, step_ratio_;
  std::unique_ptr<NewtonMatrix> matrix_;
};

}  // namespace

void register_reuse_jacobian(JacobianRegistry& registry) {
  registry.add(jacobian_name(JacobianKind::kReuse),
               "fd, kept across passes and steps while it contracts well",
               [](const CorrectorOptions& o) { return std::make_unique<ReuseStrategy>(o); });
}

}  // namespace macrostep::corrector
