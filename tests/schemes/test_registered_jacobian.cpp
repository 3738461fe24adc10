// An interface-Jacobian strategy that only this file knows (corrector/jacobian_registry.hpp): it
// registers itself with the registry from here, without any central file naming it, and the
// implicit scheme runs with it when its options name it. The strategy wraps the registry's "fd"
// and counts what the scheme asks of it, so that the run must give fd's numbers bit for bit
// and the counts show that the scheme asked this strategy, not fd directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "explicit_options.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

// What the scheme asked of every "counting-fd" object.
struct Calls {
  int made = 0, started = 0, attempts = 0, wants = 0, iterates = 0, rates = 0, ends = 0;
};
Calls calls;

class CountingFd final : public corrector::InterfaceJacobianStrategy {
 public:
  explicit CountingFd(const corrector::CorrectorOptions& options)
      : fd_(corrector::JacobianRegistry::instance().make("fd", options)) {
    ++calls.made;
  }
  corrector::JacobianTraits traits() const override { return fd_->traits(); }
  void start(const system::CoupledSystem& system) override {
    ++calls.started;
    fd_->start(system);
  }
  bool wants_perturbed_runs(const control::StepPlan& plan) const override {
    ++calls.wants;
    return fd_->wants_perturbed_runs(plan);
  }
  bool next_iterate(const corrector::PassView& pass, std::span<double> residual,
                    std::span<double> s) override {
    ++calls.iterates;
    const bool ok = fd_->next_iterate(pass, residual, s);
    while (evaluations() < fd_->evaluations()) count_evaluation();
    return ok;
  }
  void observe_rate(double rate) override {
    ++calls.rates;
    fd_->observe_rate(rate);
  }
  void end_attempt(bool corrector_failed) override {
    ++calls.ends;
    fd_->end_attempt(corrector_failed);
  }

 protected:
  void on_begin_attempt(const corrector::AttemptView& attempt) override {
    ++calls.attempts;
    fd_->begin_attempt(attempt);
  }

 private:
  std::unique_ptr<corrector::InterfaceJacobianStrategy> fd_;
};

// The one registration line; an object file linked into the program itself is never dropped.
const bool registered =
    (corrector::JacobianRegistry::instance().add(
         "counting-fd", "fd, counting what the scheme asks (test only)",
         [](const corrector::CorrectorOptions& o) { return std::make_unique<CountingFd>(o); }),
     true);

struct AcceptedPoint {
  double t;
  std::vector<double> u;
  std::vector<std::vector<double>> y;
  bool operator==(const AcceptedPoint&) const = default;
};

std::vector<AcceptedPoint> run(const system::CoupledSystem& sys, const schemes::SchemeOptions& o,
                               schemes::SchemeResult& r) {
  executors::InProcessOptions io;
  io.solver = testing::reference_solver();
  io.rollback = schemes::needs_rollback(o);
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), io);
  std::vector<AcceptedPoint> points;
  auto scheme = schemes::make_scheme(o);
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        points.push_back({p.time, {p.u.begin(), p.u.end()}, {p.outputs.begin(), p.outputs.end()}});
      },
      {}, r);
  return points;
}

TEST(RegisteredJacobian, TheRegistryServesAStrategyRegisteredOutsideTheLibrary) {
  ASSERT_TRUE(registered);
  const auto& registry = corrector::JacobianRegistry::instance();
  const corrector::JacobianEntry* entry = registry.find("counting-fd");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->description, "fd, counting what the scheme asks (test only)");
  // The built-ins first, in the order of their list; a program's own after them.
  std::vector<std::string> names;
  for (const auto& e : registry.entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fd", "sap", "reuse", "quasi-newton", "heun",
                                             "broyden", "counting-fd"}));
  const int made = calls.made;
  EXPECT_NE(dynamic_cast<CountingFd*>(registry.make("counting-fd", {}).get()), nullptr);
  EXPECT_EQ(calls.made, made + 1);
  EXPECT_THROW(
      corrector::JacobianRegistry::instance().add(
          "counting-fd", "again",
          [](const corrector::CorrectorOptions& o) { return std::make_unique<CountingFd>(o); }),
      std::logic_error);
}

// A controlled implicit run of the linear two-mass oscillator (imMD, rejections and all) with
// "counting-fd" gives the run with "fd" bit for bit, and the scheme asked the counting strategy
// for every attempt, perturbed-run decision and iterate.
TEST(RegisteredJacobian, AnImplicitRunUsesTheRegisteredStrategy) {
  const auto sys = system::make_chain_system(testing::linear_two_mass(), {0, 1, 2});
  auto o = testing::controlled(0.05, control::Estimator::kImMD, 1e-6);
  o.corrector = corrector::CorrectorOptions{};
  schemes::SchemeResult with_fd, with_counting;
  const auto fd_points = run(sys, o, with_fd);
  o.corrector->jacobian = "counting-fd";
  calls = {};
  const auto counted_points = run(sys, o, with_counting);

  ASSERT_GT(fd_points.size(), 10u);
  EXPECT_TRUE(counted_points == fd_points);
  const std::uint64_t attempts = with_counting.steps.accepted + with_counting.steps.rejected;
  EXPECT_EQ(attempts, with_fd.steps.accepted + with_fd.steps.rejected);
  EXPECT_EQ(calls.made, 1);
  EXPECT_EQ(calls.started, 1);
  EXPECT_EQ(static_cast<std::uint64_t>(calls.attempts), attempts);
  EXPECT_EQ(static_cast<std::uint64_t>(calls.ends), attempts);
  EXPECT_GT(calls.iterates, 0);
  EXPECT_GE(calls.wants, calls.iterates);
  EXPECT_GT(calls.rates, 0);
  // fd assembles one J per iterate, and the scheme reports the wrapper's count.
  EXPECT_EQ(with_counting.corrector.jacobian_evaluations,
            static_cast<std::uint64_t>(calls.iterates));
  EXPECT_EQ(with_counting.corrector.jacobian_evaluations, with_fd.corrector.jacobian_evaluations);
}

TEST(RegisteredJacobian, AnUnregisteredNameIsRefusedWithTheRegisteredOnes) {
  corrector::CorrectorOptions c;
  c.jacobian = "frozen";
  try {
    schemes::IterativeScheme scheme(c);
    FAIL() << "an unregistered jacobian was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("fd, sap, reuse, quasi-newton, heun, broyden or counting-fd"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace macrostep
