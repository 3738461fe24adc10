// A Subsystem with the structure of another: sizes, roles, names, units, Jacobian pattern,
// feed-through and initial state forwarded to `base`. The evaluations (residual, jacobian,
// outputs) forward too unless a derived view overrides them, as a mode's equations do
// (model/events.hpp: the same structure, other equations). The derivatives that the base class
// gives by finite differences (feed-through, output and input Jacobians) are not forwarded: they
// follow the view's own evaluations, by central differences. The coupling Jacobians keep the
// base's patterns (the same structure: they hold every entry a mode can make nonzero), so that
// a caller that read them from the base once (system::MonolithicSystem) gets its entries.
//
// Ownership: references `base`, which must outlive the view. Thread-safety: as the base.
#pragma once

#include "macrostep/model/subsystem.hpp"

namespace macrostep::model {

class SubsystemView : public Subsystem {
 public:
  explicit SubsystemView(const Subsystem& base) : base_(base) {}

  std::size_t state_size() const override { return base_.state_size(); }
  std::size_t input_size() const override { return base_.input_size(); }
  std::size_t output_size() const override { return base_.output_size(); }
  bool has_feedthrough() const override { return base_.has_feedthrough(); }
  bool output_feeds_through(std::size_t o) const override { return base_.output_feeds_through(o); }
  std::span<const StateRole> state_roles() const override { return base_.state_roles(); }
  std::span<const double> state_nominals() const override { return base_.state_nominals(); }
  double output_nominal(std::size_t i) const override { return base_.output_nominal(i); }
  std::string state_name(std::size_t i) const override { return base_.state_name(i); }
  std::string output_name(std::size_t i) const override { return base_.output_name(i); }
  std::string input_name(std::size_t i) const override { return base_.input_name(i); }
  std::string output_unit(std::size_t i) const override { return base_.output_unit(i); }
  std::string state_unit(std::size_t i) const override { return base_.state_unit(i); }
  std::string state_description(std::size_t i) const override { return base_.state_description(i); }
  std::string output_description(std::size_t i) const override {
    return base_.output_description(i);
  }
  bool input_is_effort(std::size_t i) const override { return base_.input_is_effort(i); }
  double initial_time() const override { return base_.initial_time(); }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    base_.initial_state(u0, z0, zp0);
  }
  const SparsityPattern& jacobian_pattern() const override { return base_.jacobian_pattern(); }
  bool outputs_affine_in_inputs() const override { return base_.outputs_affine_in_inputs(); }
  EntryPattern output_jacobian_pattern() const override { return base_.output_jacobian_pattern(); }
  EntryPattern input_jacobian_pattern() const override { return base_.input_jacobian_pattern(); }
  // Central differences of this view's outputs() / residual(), in the base's pattern order.
  void output_jacobian(double t, std::span<const double> z, std::span<const double> u,
                       std::span<double> values) const override;
  void input_jacobian(double t, std::span<const double> z, std::span<const double> zp,
                      std::span<const double> u, std::span<double> values) const override;

  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    base_.residual(t, z, zp, u, r);
  }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override {
    base_.jacobian(t, z, zp, u, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override {
    base_.outputs(t, z, u, y);
  }

 protected:
  const Subsystem& base() const { return base_; }

 private:
  const Subsystem& base_;
};

}  // namespace macrostep::model
