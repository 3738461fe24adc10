// Iterative schemes' use of an Executor (executor.hpp call order; METHODS.md §4.1-4.2, D-17;
// DESIGN.md contracts 1 and 2): several step() passes from one accepted T_N, each with new
// support points and its own set of extra runs (perturbed runs encoded as (channel, end value),
// comparison runs), then accept() or reject().
//  - The in-process and the process executor give bit-identical outputs for every run of every
//    pass, and identical accepted states (contract 1), also when steps are rejected.
//  - A pass depends only on T_N and its polynomial: the last of several passes equals a single
//    pass with the same polynomial in an executor that never ran the earlier ones (contract 2,
//    exact rollback; the reference is independent of the restore path).
//  - A perturbed run equals a comparison run whose full polynomial has that end value changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/history.hpp"
#include "macrostep/system/chain_system.hpp"

#include "../support/same_bits.hpp"
#include "../support/test_chain.hpp"

namespace macrostep {
namespace {

using macrostep::testing::same_bits;

using runner::ExtraRun;

// Everything observable of a driven sequence, in order.
struct Trace {
  std::vector<std::vector<double>> values;
  void add(const executors::PassOutcome& o) {
    for (const auto& s : o.subsystems) {
      values.push_back(s.nominal.outputs);
      for (const auto& e : s.extra) values.push_back(e.outputs);
    }
  }
};

// What one pass does: the nominal end values, and which extra runs come along.
enum class Extras { kNone, kPerturbedAndComparison, kPerturbedAsComparison };

struct Fixture {
  library::ChainParameters params = testing::test_chain(18, 5);
  std::vector<std::size_t> boundaries = library::equal_partition(18, 3);
  system::CoupledSystem system = system::make_chain_system(params, boundaries);
  std::vector<double> u0 = system.initial_couplings();
  std::vector<library::ModelDescription> models = library::chain_segment_descriptions(
      std::make_shared<const library::ChainParameters>(params), boundaries);

  std::unique_ptr<executors::Executor> make(bool processes, bool host_first = false) const {
    if (processes) {
      executors::ProcessOptions po;
      po.solver = testing::tight_solver();
      po.host_first_subsystem = host_first;
      po.executable = MACROSTEP_BINARY;
      po.extra_runs = 3;
      return std::make_unique<executors::ProcessExecutor>(system, models, u0, po);
    }
    executors::InProcessOptions io;
    io.solver = testing::tight_solver();
    io.threads = 2;
    return std::make_unique<executors::InProcessExecutor>(system, u0, io);
  }

  // One pass from T_N to t1 with end values `s` (all coupling channels); returns the coupling
  // variables phi(y) of the nominal runs. Perturbed runs move channel k's end value by 1e-3
  // relative; kPerturbedAsComparison sends the same runs as full polynomials instead.
  std::vector<double> pass(executors::Executor& ex, const polynomials::CouplingHistory& hist,
                           double t1, const std::vector<double>& s, Extras extras,
                           Trace& trace) const {
    const std::size_t ns = system.subsystem_count();
    const int kappa = std::min<int>(2, static_cast<int>(hist.size()) - 1);
    std::vector<double> s_hat = s;  // an exMD-like comparison run: other end values
    for (auto& v : s_hat) v *= 0.999;
    std::vector<executors::SubsystemCommand> commands(ns);
    for (std::size_t i = 0; i < ns; ++i) {
      const auto in = system.feed_channels(i);
      const std::vector<std::size_t> sel(in.begin(), in.end());
      auto& cmd = commands[i];
      cmd.nominal = polynomials::step_polynomial(hist, kappa, t1, s, sel);
      if (extras == Extras::kNone) continue;
      for (std::uint32_t k = 0; k < sel.size(); ++k) {
        const double end = s[sel[k]] * (1.0 + 1e-3) + 1e-6;
        if (extras == Extras::kPerturbedAndComparison) {
          cmd.extra.push_back(ExtraRun::perturbed(k, end));
        } else {
          auto p = cmd.nominal;
          p.set_end_value(k, end);
          cmd.extra.push_back(ExtraRun::comparison(p));
        }
      }
      if (extras == Extras::kPerturbedAndComparison) {
        cmd.extra.push_back(
            ExtraRun::comparison(polynomials::step_polynomial(hist, kappa, t1, s_hat, sel)));
      }
    }
    executors::PassOutcome out;
    ex.step(t1, commands, out);
    EXPECT_TRUE(out.ok) << out.error;
    trace.add(out);
    std::vector<std::vector<double>> y(ns);
    for (std::size_t i = 0; i < ns; ++i) y[i] = out.subsystems[i].nominal.outputs;
    std::vector<double> u(system.coupling_count());
    system.evaluate_couplings(y, u);
    return u;
  }

  std::vector<double> state(const executors::Executor& ex) const {
    std::vector<double> all;
    for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
      std::vector<double> z(system.subsystem(i).state_size());
      ex.accepted_state(i, z);
      all.insert(all.end(), z.begin(), z.end());
    }
    return all;
  }
};

constexpr double kH = 2e-6;
constexpr int kSteps = 12;

// Fixed-point corrector passes (u^{j+1} = phi(y(u^j)), the first with perturbed and comparison
// runs, the later ones without), every third step rejected after its passes and redone with a
// half step.
Trace corrector_sequence(const Fixture& f, executors::Executor& ex) {
  Trace trace;
  polynomials::CouplingHistory hist(f.system.coupling_count());
  hist.push(0.0, f.u0);
  std::vector<double> u_pre(f.system.coupling_count());
  double t = 0.0;
  for (int n = 0; n < kSteps; ++n) {
    double t1 = t + kH;
    polynomials::lagrange_prediction(hist, std::min<int>(2, static_cast<int>(hist.size()) - 1), t1,
                                     u_pre);
    std::vector<double> u = f.pass(ex, hist, t1, u_pre, Extras::kPerturbedAndComparison, trace);
    u = f.pass(ex, hist, t1, u, Extras::kNone, trace);
    if (n % 3 == 1) {  // rejected: try again with half the step
      ex.reject();
      trace.values.push_back(f.state(ex));  // the T_N state is back
      t1 = t + 0.5 * kH;
      polynomials::lagrange_prediction(hist, std::min<int>(2, static_cast<int>(hist.size()) - 1),
                                       t1, u_pre);
      u = f.pass(ex, hist, t1, u_pre, Extras::kPerturbedAndComparison, trace);
    }
    u = f.pass(ex, hist, t1, u, Extras::kNone, trace);
    ex.accept();
    trace.values.push_back(f.state(ex));
    hist.push(t1, u);
    t = t1;
  }
  return trace;
}

void check_corrector_sequence(bool host_first) {
  const Fixture f;
  auto in_process = f.make(false);
  auto processes = f.make(true, host_first);
  const Trace a = corrector_sequence(f, *in_process);
  const Trace b = corrector_sequence(f, *processes);
  ASSERT_EQ(a.values.size(), b.values.size());
  ASSERT_GT(a.values.size(), 100u);
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    ASSERT_TRUE(same_bits(a.values[k], b.values[k])) << "value set " << k;
  }
  for (std::size_t i = 0; i < f.system.subsystem_count(); ++i) {
    EXPECT_EQ(in_process->total_stats(i).steps, processes->total_stats(i).steps);
    EXPECT_EQ(in_process->total_stats(i).residual_evals, processes->total_stats(i).residual_evals);
  }
}

TEST(ExecutorPasses, CorrectorPassesAndRejectionsAreBitIdenticalInProcessAndInProcesses) {
  check_corrector_sequence(false);
}

// The same with subsystem 1 run by the master (ProcessOptions::host_first_subsystem).
TEST(ExecutorPasses, CorrectorPassesAreBitIdenticalWithTheMasterHostingSubsystemOne) {
  check_corrector_sequence(true);
}

// The last pass of a macro step equals a single pass with its polynomial from the same T_N: the
// earlier passes (other polynomials, other runs, other end times) leave no trace. And perturbed
// runs equal comparison runs carrying the perturbed polynomial in full.
void check_passes_leave_no_trace(bool processes) {
  const Fixture f;
  auto many = f.make(processes);
  auto once = f.make(processes);
  polynomials::CouplingHistory hist(f.system.coupling_count());
  hist.push(0.0, f.u0);
  std::vector<double> u_pre(f.system.coupling_count());
  double t = 0.0;
  for (int n = 0; n < 6; ++n) {
    const double t1 = t + kH;
    polynomials::lagrange_prediction(hist, std::min<int>(2, static_cast<int>(hist.size()) - 1), t1,
                                     u_pre);
    Trace scratch, last_many, last_once;
    std::vector<double> other = u_pre;
    for (auto& v : other) v *= 1.5;
    (void)f.pass(*many, hist, t1 + kH, other, Extras::kPerturbedAndComparison, scratch);
    (void)f.pass(*many, hist, t1, other, Extras::kNone, scratch);
    const auto u = f.pass(*many, hist, t1, u_pre, Extras::kPerturbedAndComparison, last_many);
    const auto u_once = f.pass(*once, hist, t1, u_pre, Extras::kPerturbedAsComparison, last_once);
    ASSERT_TRUE(same_bits(u, u_once)) << "step " << n;
    // Per subsystem: nominal, the perturbed runs, then (many) the comparison run.
    std::size_t a = 0, b = 0;
    for (std::size_t i = 0; i < f.system.subsystem_count(); ++i) {
      const std::size_t inputs = f.system.subsystem(i).input_size();
      for (std::size_t r = 0; r <= inputs; ++r) {
        ASSERT_TRUE(same_bits(last_many.values[a + r], last_once.values[b + r]))
            << "step " << n << " subsystem " << i << " run " << r;
      }
      a += inputs + 2;
      b += inputs + 1;
    }
    many->accept();
    once->accept();
    ASSERT_TRUE(same_bits(f.state(*many), f.state(*once)));
    hist.push(t1, u);
    t = t1;
  }
}

TEST(ExecutorPasses, EarlierPassesLeaveNoTraceInProcess) {
  check_passes_leave_no_trace(false);
}

TEST(ExecutorPasses, EarlierPassesLeaveNoTraceInProcesses) {
  check_passes_leave_no_trace(true);
}

// Without rollback there is no T_N to go back to: a second pass, extra runs and reject() are
// refused, with both executors.
TEST(ExecutorPasses, WithoutRollbackASecondPassIsRefused) {
  const Fixture f;
  for (bool processes : {false, true}) {
    std::unique_ptr<executors::Executor> ex;
    if (processes) {
      executors::ProcessOptions po;
      po.solver = testing::tight_solver();
      po.rollback = false;
      po.executable = MACROSTEP_BINARY;
      ex = std::make_unique<executors::ProcessExecutor>(f.system, f.models, f.u0, po);
    } else {
      executors::InProcessOptions io;
      io.solver = testing::tight_solver();
      io.rollback = false;
      ex = std::make_unique<executors::InProcessExecutor>(f.system, f.u0, io);
    }
    polynomials::CouplingHistory hist(f.system.coupling_count());
    hist.push(0.0, f.u0);
    Trace trace;
    EXPECT_THROW(f.pass(*ex, hist, kH, f.u0, Extras::kPerturbedAndComparison, trace),
                 std::logic_error);
    (void)f.pass(*ex, hist, kH, f.u0, Extras::kNone, trace);
    EXPECT_THROW(f.pass(*ex, hist, kH, f.u0, Extras::kNone, trace), std::logic_error);
    EXPECT_THROW(ex->reject(), std::logic_error);
    ex->accept();
    EXPECT_EQ(ex->accepted_time(), kH);
  }
}

}  // namespace
}  // namespace macrostep
