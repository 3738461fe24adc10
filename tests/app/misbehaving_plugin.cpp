// A test plugin that misbehaves as models from outside sometimes do: a mass on a spring with a
// force input (outputs x, v), which from time `at` on calls exit(0), dereferences a null
// pointer, calls abort() or sleeps for ever in its residual. Parameters (JSON): misbehaviour
// ("exit", "segfault", "abort", "hang"), at [s], force_sign (1 or -1), x0 [m].
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "macrostep/plugin/plugin_api.hpp"

namespace {

using macrostep::model::SparsityPattern;
using macrostep::model::StateRole;

class MisbehavingMass final : public macrostep::model::Subsystem {
 public:
  explicit MisbehavingMass(const std::string& parameters_json) {
    const auto p = nlohmann::json::parse(parameters_json);
    how_ = p.value("misbehaviour", std::string("exit"));
    at_ = p.value("at", 0.5e-3);
    sign_ = p.value("force_sign", 1.0);
    x0_ = p.value("x0", 1e-3);
    if (how_ != "exit" && how_ != "segfault" && how_ != "abort" && how_ != "hang") {
      throw std::invalid_argument("misbehaviour: exit, segfault, abort or hang");
    }
    pattern_.n = 2;
    pattern_.column_start = {0, 2, 4};
    pattern_.row_index = {0, 1, 0, 1};
  }
  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 2; }
  std::span<const StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  std::string output_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  std::string input_name(std::size_t) const override { return "force"; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    z0[0] = x0_;
    z0[1] = 0.0;
    zp0[0] = 0.0;
    zp0[1] = -1e3 * z0[0] + sign_ * u0[0];
  }
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    if (t >= at_) misbehave();
    r[0] = zp[0] - z[1];
    r[1] = zp[1] + 1e3 * z[0] - sign_ * u[0];
  }
  const SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;
    values[1] = 1e3;
    values[2] = -1.0;
    values[3] = cj;
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
    y[1] = z[1];
  }

 private:
  void misbehave() const {
    if (how_ == "exit") std::exit(0);
    if (how_ == "abort") std::abort();
    while (how_ == "hang") ::pause();
    volatile int* null = nullptr;
    *null = 1;
  }

  std::string how_;
  double at_ = 0.0, sign_ = 1.0, x0_ = 1e-3;
  SparsityPattern pattern_;
  static constexpr StateRole roles_[2] = {StateRole::kPosition, StateRole::kVelocity};
};

}  // namespace

MACROSTEP_PLUGIN(MisbehavingMass)
