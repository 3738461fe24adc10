// Exact workspace snapshot / restore / clone (DESIGN.md contract 2; METHODS.md §4.7;
// seed 000 §4.2: a restored solver continues "without any initialization or additional
// starting procedures"). Every comparison here is bitwise.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "test_support.hpp"

namespace macrostep {
namespace {

using ida::Integrator;
using ida::IntegratorOptions;
using ida::LinearSolver;

struct State {
  std::vector<double> z, zp;
};

State read(const Integrator& integ) {
  State s;
  s.z.resize(integ.subsystem().state_size());
  s.zp.resize(s.z.size());
  integ.state(s.z, s.zp);
  return s;
}

void expect_identical(const Integrator& a, const Integrator& b, const char* where, int k) {
  const State sa = read(a), sb = read(b);
  EXPECT_EQ(a.time(), b.time()) << where << " macro point " << k;
  EXPECT_TRUE(test::bit_identical(sa.z, sb.z)) << where << " z differs at macro point " << k;
  EXPECT_TRUE(test::bit_identical(sa.zp, sb.zp)) << where << " z' differs at macro point " << k;
  EXPECT_EQ(a.current_order(), b.current_order()) << where << " macro point " << k;
  EXPECT_EQ(a.next_step_size(), b.next_step_size()) << where << " macro point " << k;
}

class SnapshotTest : public ::testing::TestWithParam<LinearSolver> {
 protected:
  void SetUp() override {
    params_ = test::nonlinear_chain(30);
    // An interior segment: two inputs, like a co-simulation subsystem.
    segment_ = std::make_unique<library::ChainSegment>(params_, 10, 20);
    options_.linear_solver = GetParam();
  }
  library::ChainParameters params_;
  std::unique_ptr<library::ChainSegment> segment_;
  IntegratorOptions options_;
  static constexpr double kH = 2e-5;
  static constexpr int kPoints = 45;
};

// A->B->C equals A->B, snapshot, B->C' (other input), restore, B->C, at every macro point of
// a sweep (seed 000 §4.2 repetition of macro steps).
TEST_P(SnapshotTest, RestoreAfterDifferentInputIsBitIdentical) {
  test::QuadraticInput nominal(2, 0.0, 100.0);
  // A much harsher input over a longer step: forces step-size changes, error-test failures
  // and new Jacobian factorizations that the restore must undo.
  test::QuadraticInput other(2, 0.0, -3e4);
  Integrator reference(*segment_, options_, &nominal);
  Integrator rolled(*segment_, options_, &nominal);
  auto snapshot = rolled.make_snapshot();
  long disturbed_setups = 0;
  for (int k = 1; k <= kPoints; ++k) {
    const double t_end = k * kH;
    const long ref_steps = reference.advance_to(t_end).steps;
    rolled.save(*snapshot);
    rolled.set_input(&other);
    // The rejected attempt: another polynomial over a longer macro step.
    disturbed_setups += rolled.advance_to(t_end + 2.5 * kH).linear_setups;
    rolled.restore(*snapshot);
    EXPECT_EQ(rolled.time(), snapshot->time());
    rolled.set_input(&nominal);
    const long steps = rolled.advance_to(t_end).steps;
    EXPECT_EQ(steps, ref_steps) << "macro point " << k;
    expect_identical(reference, rolled, "restore", k);
  }
  EXPECT_GT(disturbed_setups, kPoints) << "the disturbed runs must refactor the Jacobian";
  EXPECT_GT(snapshot->bytes(), 0u);
}

// Restoring twice from the same snapshot (a corrector iterating) stays exact, and a snapshot
// taken before the first step (nst == 0) restores to a fresh start.
TEST_P(SnapshotTest, RepeatedRestoreAndInitialSnapshot) {
  test::QuadraticInput nominal(2, 0.0, 100.0);
  test::QuadraticInput other(2, 0.0, 4e4);
  Integrator reference(*segment_, options_, &nominal);
  Integrator rolled(*segment_, options_, &nominal);
  auto initial = rolled.make_snapshot();
  rolled.advance_to(3 * kH);
  rolled.restore(*initial);
  EXPECT_EQ(rolled.time(), 0.0);
  auto mid = rolled.make_snapshot();
  for (int k = 1; k <= 10; ++k) {
    const double t_end = k * kH;
    reference.advance_to(t_end);
    rolled.save(*mid);
    for (int iteration = 0; iteration < 3; ++iteration) {
      rolled.set_input(iteration == 2 ? &nominal : &other);
      rolled.advance_to(t_end);
      if (iteration < 2) rolled.restore(*mid);
    }
    expect_identical(reference, rolled, "repeated restore", k);
  }
}

// A clone (a second integrator, e.g. a comparison or perturbed run) made from the original at
// a macro point and advanced with the same input stays bit-identical to the original.
TEST_P(SnapshotTest, CloneAdvancesBitIdentically) {
  test::QuadraticInput nominal(2, 0.0, 100.0);
  Integrator original(*segment_, options_, &nominal);
  Integrator clone(*segment_, options_, &nominal);  // fresh: never stepped before the copy
  for (int k = 1; k <= kPoints; ++k) {
    const double t_end = k * kH;
    if (k % 7 == 3) clone.copy_state_from(original);
    original.advance_to(t_end);
    if (k >= 3) {
      clone.advance_to(t_end);
      expect_identical(original, clone, "clone", k);
    }
  }
}

// Restoring a snapshot into a different integrator of the same subsystem (the worker's
// auxiliary instances, D-23) is exact too.
TEST_P(SnapshotTest, SnapshotMovesBetweenInstances) {
  test::QuadraticInput nominal(2, 0.0, 100.0);
  Integrator a(*segment_, options_, &nominal);
  Integrator b(*segment_, options_, &nominal);
  a.advance_to(5 * kH);
  auto s = a.make_snapshot();
  a.advance_to(9 * kH);
  b.advance_to(2 * kH);  // b has its own, different history and factorization
  b.restore(*s);
  b.advance_to(9 * kH);
  expect_identical(a, b, "moved snapshot", 9);
}

// KLU's block triangular form of this model has singleton blocks (no LU buffer, LUsize left
// unset by KLU) and entries off the diagonal blocks; its snapshots restore exactly too
// (DESIGN.md contract 2).
TEST_P(SnapshotTest, BlockTriangularModelRestoresBitIdentically) {
  test::CascadeModel model;
  test::QuadraticInput nominal(1, 0.0, 1e3);
  test::QuadraticInput other(1, 0.0, -5e4);
  Integrator reference(model, options_, &nominal);
  Integrator rolled(model, options_, &nominal);
  auto snapshot = rolled.make_snapshot();
  for (int k = 1; k <= 40; ++k) {
    const double t_end = k * 1e-3;
    reference.advance_to(t_end);
    rolled.save(*snapshot);
    rolled.set_input(&other);
    rolled.advance_to(t_end + 2e-3);
    rolled.restore(*snapshot);
    rolled.set_input(&nominal);
    rolled.advance_to(t_end);
    expect_identical(reference, rolled, "block triangular restore", k);
  }
}

TEST_P(SnapshotTest, RejectsSnapshotOfAnotherSize) {
  library::ChainSegment small(params_, 0, 5);
  test::QuadraticInput nominal(2, 0.0, 1.0);
  test::QuadraticInput one(1, 0.0, 1.0);
  Integrator a(*segment_, options_, &nominal);
  Integrator b(small, options_, &one);
  auto s = a.make_snapshot();
  EXPECT_THROW(b.restore(*s), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Solvers, SnapshotTest,
                         ::testing::Values(LinearSolver::kKlu, LinearSolver::kDense),
                         [](const auto& info) {
                           return info.param == LinearSolver::kKlu ? "Klu" : "Dense";
                         });

}  // namespace
}  // namespace macrostep
