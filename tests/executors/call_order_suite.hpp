// The executor protocol (executor.hpp call order), one typed suite that every executor passes:
// test_call_order instantiates it in-process and with worker processes, test_mpi_call_order
// (tests/mpi) behind the MPI bridge. A call out of order throws before anything happens, so the
// executor goes on as if it had not been made.
//
// A test program instantiates it with a factory type:
//   struct Factory {
//     // A new executor of `s` (its u0, its models) with `options` (rollback and threads set by the
//     // case); it runs 1 extra run per pass at most.
//     static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
//                                                      const executors::ExecutorOptions& options);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, CallOrder, Factory);
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/test_chain.hpp"

namespace macrostep::testing {

// The test chain of 6 masses in 2 subsystems, with the descriptions workers build it from.
struct CallOrderSystem {
  library::ChainParameters params = test_chain(6, 3);
  std::vector<std::size_t> boundaries = library::equal_partition(6, 2);
  system::CoupledSystem system = system::make_chain_system(params, boundaries);
  std::vector<double> u0 = system.initial_couplings();
  std::vector<library::ModelDescription> models = library::chain_segment_descriptions(
      std::make_shared<const library::ChainParameters>(params), boundaries);
};

template <class Factory>
class CallOrder : public ::testing::Test {
 protected:
  static constexpr double kH = 1e-5;

  std::unique_ptr<executors::Executor> make(bool rollback) const {
    executors::ExecutorOptions o;
    o.rollback = rollback;
    o.threads = 1;
    auto ex = Factory::make(s_, o);
    EXPECT_EQ(ex->rollback(), rollback);
    return ex;
  }

  // Every subsystem's inputs held at u0 from the accepted time to t1 (NaN everywhere when
  // `poisoned`: the pass fails), with one perturbed extra run each when `extra`.
  std::vector<executors::SubsystemCommand> commands(const executors::Executor& ex, double t1,
                                                    bool poisoned = false,
                                                    bool extra = false) const {
    std::vector<executors::SubsystemCommand> c(s_.system.subsystem_count());
    for (std::size_t i = 0; i < c.size(); ++i) {
      model::SupportPoints& p = c[i].nominal;
      p.degree = 0;
      p.channels = static_cast<std::uint32_t>(s_.system.subsystem(i).input_size());
      p.step_begin = ex.accepted_time();
      p.time[0] = t1;
      std::vector<double> in(p.channels);
      s_.system.gather_inputs(i, s_.u0, in);
      for (std::size_t k = 0; k < in.size(); ++k) {
        p.value[k][0] = poisoned ? std::numeric_limits<double>::quiet_NaN() : in[k];
      }
      if (extra) c[i].extra.push_back(runner::ExtraRun::perturbed(0, in[0] * 1.001));
    }
    return c;
  }

  // One pass to t1; returns its outcome's ok.
  bool pass(executors::Executor& ex, double t1, bool poisoned = false, bool extra = false) const {
    executors::PassOutcome out;
    ex.step(t1, commands(ex, t1, poisoned, extra), out);
    return out.ok;
  }

  // Inputs for evaluate_outputs: subsystem 1 asked at its u0 inputs, the others not.
  std::vector<std::vector<double>> evaluation_inputs() const {
    std::vector<std::vector<double>> inputs(s_.system.subsystem_count());
    inputs[0].resize(s_.system.subsystem(0).input_size());
    s_.system.gather_inputs(0, s_.u0, inputs[0]);
    return inputs;
  }

  std::string state_file(const std::string& name) const {
    return (std::filesystem::temp_directory_path() /
            ("call-order-" + std::to_string(::getpid()) + "-" + name))
        .string();
  }

  CallOrderSystem s_;
};

TYPED_TEST_SUITE_P(CallOrder);

// Without rollback there is no T_N to go back to: one pass per macro step, no extra runs.
TYPED_TEST_P(CallOrder, WithoutRollbackASecondPassAndExtraRunsAreRefused) {
  auto ex = this->make(false);
  const double h = this->kH;
  EXPECT_THROW(this->pass(*ex, h, false, true), std::logic_error);
  ASSERT_TRUE(this->pass(*ex, h));  // the refused pass with extra runs was no pass
  EXPECT_THROW(this->pass(*ex, h), std::logic_error);
  ex->accept();
  EXPECT_EQ(ex->accepted_time(), h);
  ASSERT_TRUE(this->pass(*ex, 2 * h));
  ex->accept();
  EXPECT_EQ(ex->accepted_time(), 2 * h);
}

TYPED_TEST_P(CallOrder, WithoutRollbackRejectIsRefused) {
  auto ex = this->make(false);
  ASSERT_TRUE(this->pass(*ex, this->kH));
  EXPECT_THROW(ex->reject(), std::logic_error);
  ex->accept();  // the attempt is still there
  EXPECT_EQ(ex->accepted_time(), this->kH);
}

// With rollback: passes as often as wanted, with extra runs, then accept or reject.
TYPED_TEST_P(CallOrder, WithRollbackPassesRepeatAndRejectGoesBack) {
  auto ex = this->make(true);
  const double h = this->kH;
  ASSERT_TRUE(this->pass(*ex, h, false, true));
  ASSERT_TRUE(this->pass(*ex, 2 * h));  // another T_{N+1} in the same macro step
  ex->reject();
  EXPECT_EQ(ex->accepted_time(), 0.0);
  ASSERT_TRUE(this->pass(*ex, h));
  ex->accept();
  EXPECT_EQ(ex->accepted_time(), h);
}

TYPED_TEST_P(CallOrder, AcceptAndRejectNeedAStep) {
  auto ex = this->make(true);
  EXPECT_THROW(ex->accept(), std::logic_error);
  EXPECT_THROW(ex->reject(), std::logic_error);
  ASSERT_TRUE(this->pass(*ex, this->kH));
  ex->accept();
  EXPECT_THROW(ex->accept(), std::logic_error);
  EXPECT_THROW(ex->reject(), std::logic_error);
  ASSERT_TRUE(this->pass(*ex, 2 * this->kH));
  ex->reject();
  EXPECT_THROW(ex->reject(), std::logic_error);
  EXPECT_THROW(ex->accept(), std::logic_error);
  EXPECT_EQ(ex->accepted_time(), this->kH);
}

// evaluate_outputs: after a step whose outcome was ok, before its accept / reject.
TYPED_TEST_P(CallOrder, EvaluateOutputsOnlyAfterAnOkStep) {
  auto ex = this->make(true);
  const auto inputs = this->evaluation_inputs();
  executors::EvaluationOutcome e;
  EXPECT_THROW(ex->evaluate_outputs(inputs, e), std::logic_error);  // before any step
  ASSERT_TRUE(this->pass(*ex, this->kH));
  ex->evaluate_outputs(inputs, e);
  EXPECT_TRUE(e.ok) << e.error;
  ex->evaluate_outputs(inputs, e);  // any number of times
  EXPECT_TRUE(e.ok) << e.error;
  ex->accept();
  EXPECT_THROW(ex->evaluate_outputs(inputs, e), std::logic_error);  // after accept
  ASSERT_TRUE(this->pass(*ex, 2 * this->kH));
  ex->reject();
  EXPECT_THROW(ex->evaluate_outputs(inputs, e), std::logic_error);  // after reject
  EXPECT_FALSE(this->pass(*ex, 2 * this->kH, true));
  EXPECT_THROW(ex->evaluate_outputs(inputs, e), std::logic_error);  // after a failed step
}

// After a failed step: step() again or reject(), never accept().
TYPED_TEST_P(CallOrder, AfterAFailedStepOnlyStepOrReject) {
  auto ex = this->make(true);
  const double h = this->kH;
  EXPECT_FALSE(this->pass(*ex, h, true));
  EXPECT_THROW(ex->accept(), std::logic_error);
  ASSERT_TRUE(this->pass(*ex, h));  // from T_N again
  ex->accept();
  EXPECT_EQ(ex->accepted_time(), h);
  EXPECT_FALSE(this->pass(*ex, 2 * h, true));
  ex->reject();
  EXPECT_EQ(ex->accepted_time(), h);
  ASSERT_TRUE(this->pass(*ex, 2 * h));
  ex->accept();
  EXPECT_EQ(ex->accepted_time(), 2 * h);
}

// Without rollback a failed step ends the macro step's options: nothing can follow it.
TYPED_TEST_P(CallOrder, WithoutRollbackAFailedStepCannotBeAccepted) {
  auto ex = this->make(false);
  EXPECT_FALSE(this->pass(*ex, this->kH, true));
  EXPECT_THROW(ex->accept(), std::logic_error);
  EXPECT_THROW(ex->reject(), std::logic_error);
  EXPECT_THROW(this->pass(*ex, this->kH), std::logic_error);
}

// State transfer and the accepted state only between macro steps; import needs rollback.
TYPED_TEST_P(CallOrder, StateTransferBetweenStepsAndImportNeedsRollback) {
  const std::string file = this->state_file("state");
  {
    auto ex = this->make(false);
    ASSERT_TRUE(this->pass(*ex, this->kH));
    ex->accept();
    EXPECT_GT(ex->export_state(0, file), 0u);  // export needs no rollback
    EXPECT_THROW(ex->import_state(0, file), std::logic_error);
  }
  auto ex = this->make(true);
  std::vector<double> z(this->s_.system.subsystem(0).state_size());
  ASSERT_TRUE(this->pass(*ex, this->kH));
  EXPECT_THROW(ex->export_state(0, file), std::logic_error);
  EXPECT_THROW(ex->import_state(0, file), std::logic_error);
  EXPECT_THROW(ex->accepted_state(0, z), std::logic_error);
  ex->reject();
  ex->accepted_state(0, z);
  ex->import_state(0, file);
  EXPECT_EQ(ex->accepted_time(), this->kH);
  std::filesystem::remove(file);
}

// Wrong counts and indices are refused before anything happens (the refused pass is no pass).
TYPED_TEST_P(CallOrder, CountsAndIndicesAreChecked) {
  auto ex = this->make(false);
  const std::size_t n = ex->subsystem_count();
  auto commands = this->commands(*ex, this->kH);
  commands.pop_back();
  executors::PassOutcome out;
  EXPECT_THROW(ex->step(this->kH, commands, out), std::invalid_argument);
  ASSERT_TRUE(this->pass(*ex, this->kH));
  executors::EvaluationOutcome e;
  auto inputs = this->evaluation_inputs();
  inputs.emplace_back();
  EXPECT_THROW(ex->evaluate_outputs(inputs, e), std::invalid_argument);
  ex->accept();
  std::vector<double> z(this->s_.system.subsystem(0).state_size());
  EXPECT_THROW(ex->accepted_state(n, z), std::out_of_range);
  EXPECT_THROW((void)ex->total_stats(n), std::out_of_range);
  EXPECT_THROW((void)ex->snapshot_ns(n), std::out_of_range);
  EXPECT_THROW((void)ex->export_state(n, this->state_file("none")), std::out_of_range);
  EXPECT_GT(ex->total_stats(n - 1).steps, 0L);
}

REGISTER_TYPED_TEST_SUITE_P(CallOrder, WithoutRollbackASecondPassAndExtraRunsAreRefused,
                            WithoutRollbackRejectIsRefused,
                            WithRollbackPassesRepeatAndRejectGoesBack, AcceptAndRejectNeedAStep,
                            EvaluateOutputsOnlyAfterAnOkStep, AfterAFailedStepOnlyStepOrReject,
                            WithoutRollbackAFailedStepCannotBeAccepted,
                            StateTransferBetweenStepsAndImportNeedsRollback,
                            CountsAndIndicesAreChecked);

}  // namespace macrostep::testing
