// Displacement coupling (METHODS.md §1.2; seed 000 Eq. 2.8): the master passes a body's
// position and velocity; displacement/displacement is two such laws.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "law_checks.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/displacement_law.hpp"

namespace macrostep {
namespace {

using system::DisplacementLaw;

// One oscillator of the D/D two-mass decomposition (seed 000 Eq. 2.8): it holds its own copy of
// the coupling element and is driven by the other body's position and velocity,
//   ẋ = v,  m v̇ = −c x − d v + c_c (x̃ − x) + d_c (ṽ − v).
// States and outputs [x, v]; inputs [x̃, ṽ].
class DisplacementDrivenOscillator final : public model::Subsystem {
 public:
  DisplacementDrivenOscillator(double m, double c, double d, double cc, double dc, double x0,
                               double v0)
      : m_(m), c_(c), d_(d), cc_(cc), dc_(dc), x0_(x0), v0_(v0) {
    pattern_.n = 2;
    pattern_.column_start = {0, 2, 4};
    pattern_.row_index = {0, 1, 0, 1};
  }
  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 2; }
  std::size_t output_size() const override { return 2; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  std::string output_name(std::size_t i) const override { return state_name(i); }
  std::string input_name(std::size_t i) const override { return i == 0 ? "x_tilde" : "v_tilde"; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    z0[0] = x0_;
    z0[1] = v0_;
    zp0[0] = v0_;
    zp0[1] = force(z0, u0) / m_;
  }
  void residual(double, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = m_ * zp[1] - force(z, u);
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;
    values[1] = c_ + cc_;
    values[2] = -1.0;
    values[3] = cj * m_ + d_ + dc_;
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
    y[1] = z[1];
  }

 private:
  double force(std::span<const double> z, std::span<const double> u) const {
    return -c_ * z[0] - d_ * z[1] + cc_ * (u[0] - z[0]) + dc_ * (u[1] - z[1]);
  }
  double m_, c_, d_, cc_, dc_, x0_, v0_;
  std::array<model::StateRole, 2> roles_{model::StateRole::kPosition, model::StateRole::kVelocity};
  model::SparsityPattern pattern_;
};

TEST(DisplacementLaw, PassesPositionAndVelocityThrough) {
  const DisplacementLaw law("x_tilde_2", "v_tilde_2", {1, 0}, {1, 1});
  ASSERT_EQ(law.write_count(), 2u);
  EXPECT_EQ(law.variable_names()[0], "x_tilde_2");
  EXPECT_EQ(law.variable_names()[1], "v_tilde_2");
  EXPECT_FALSE(law.has_feedthrough());
  std::array<double, 2> u{};
  law.evaluate(std::array<double, 2>{0.125, -3.5}, u);
  EXPECT_EQ(u[0], 0.125);
  EXPECT_EQ(u[1], -3.5);
  testing::expect_law_jacobian_matches_central_differences(law, {0.125, -3.5}, {1.0, 1.0}, 1e-6,
                                                           1e-9);
}

// Seed 000 Eq. 2.8 in a CoupledSystem: u = [x̃2, ṽ2, x̃1, ṽ1] = φ = [x2, v2, x1, v1], no
// feed-through anywhere, and with u = φ(y) each subsystem's residual equals the corresponding
// rows of the monolithic two-mass oscillator m_i v̇_i = −c_i x_i − d_i v_i ± F_c (Eq. 2.5/2.9
// linear, written out here by hand).
TEST(DisplacementLaw, DisplacementDisplacementTwoMassOscillator) {
  const double m1 = 1.5, m2 = 0.75, c1 = 1e3, c2 = 2e3, d1 = 1.0, d2 = 3.0, cc = 5e3, dc = 4.0;
  const double x1 = 0.01, v1 = -0.2, x2 = -0.03, v2 = 0.6;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<DisplacementDrivenOscillator>(m1, c1, d1, cc, dc, x1, v1));
  subsystems.push_back(std::make_unique<DisplacementDrivenOscillator>(m2, c2, d2, cc, dc, x2, v2));
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<DisplacementLaw>(
      "x_tilde_2", "v_tilde_2", system::OutputRef{1, 0}, system::OutputRef{1, 1}));
  laws.push_back(std::make_unique<DisplacementLaw>(
      "x_tilde_1", "v_tilde_1", system::OutputRef{0, 0}, system::OutputRef{0, 1}));
  const system::CoupledSystem coupled(std::move(subsystems), std::move(laws), {{0, 1}, {2, 3}}, {});
  const std::vector<double> u = coupled.initial_couplings();
  ASSERT_EQ(u.size(), 4u);
  EXPECT_EQ(u, (std::vector<double>{x2, v2, x1, v1}));

  const double coupling_force = cc * (x2 - x1) + dc * (v2 - v1);
  const std::array<double, 2> zp1 = {0.0, 2.0}, zp2 = {0.0, -1.0};
  std::array<double, 2> inputs{}, r{};
  coupled.gather_inputs(0, u, inputs);
  coupled.subsystem(0).residual(0.0, std::array<double, 2>{x1, v1}, zp1, inputs, r);
  EXPECT_NEAR(r[1], m1 * zp1[1] - (-c1 * x1 - d1 * v1 + coupling_force), 1e-12);
  coupled.gather_inputs(1, u, inputs);
  coupled.subsystem(1).residual(0.0, std::array<double, 2>{x2, v2}, zp2, inputs, r);
  EXPECT_NEAR(r[1], m2 * zp2[1] - (-c2 * x2 - d2 * v2 - coupling_force), 1e-12);
}

}  // namespace
}  // namespace macrostep
