// What the strategies that keep a factorised fd Jacobian across steps share (reuse, broyden;
// private to the corrector library): the NewtonMatrix made at start(), the staleness rules that
// both apply (a contraction rate R at or above reuse_rate, or a corrector failure), and the
// export of the kept J with the scheme's state (checkpoints resume it bit-identically).
#pragma once

#include <memory>
#include <vector>

#include "macrostep/corrector/corrector_options.hpp"
#include "macrostep/corrector/jacobian_strategy.hpp"
#include "macrostep/corrector/newton_matrix.hpp"

namespace macrostep::corrector {

class KeptJacobianStrategy : public InterfaceJacobianStrategy {
 public:
  explicit KeptJacobianStrategy(const CorrectorOptions& options) : rate_(options.reuse_rate) {}
  JacobianTraits traits() const override { return {}; }
  void start(const system::CoupledSystem& system) override {
    matrix_ = std::make_unique<NewtonMatrix>(system);
  }
  void observe_rate(double rate) override {
    if (rate >= rate_) matrix_->invalidate();
  }
  void end_attempt(bool corrector_failed) override {
    if (corrector_failed) matrix_->invalidate();
  }
  std::vector<std::vector<double>> export_state() const override { return matrix_->export_state(); }
  void import_state(const std::vector<std::vector<double>>& state) override {
    matrix_->import_state(state);
  }

 protected:
  NewtonMatrix& matrix() { return *matrix_; }
  const NewtonMatrix& matrix() const { return *matrix_; }

 private:
  double rate_;
  std::unique_ptr<NewtonMatrix> matrix_;
};

}  // namespace macrostep::corrector
