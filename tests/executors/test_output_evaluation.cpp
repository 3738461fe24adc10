// Executor::evaluate_outputs (executor.hpp; the output evaluation of the consistent update, METHODS
// §1.1 / D-1, seed 000 Eq. 2.22) on the force/displacement two-mass oscillator with the cubic
// coupling element (tests/schemes/force_displacement_model.hpp), whose feed-through output of
// subsystem 2 is nonlinear in its inputs:
//  - in-process, in worker processes, and with the master hosting subsystem 1, the evaluated
//    outputs and ∂y/∂u are the same bits (contract 1: one SubsystemRunner::evaluate_outputs
//    behind all three), and at the run's own end inputs they are the step's reply bit for bit;
//  - an evaluation changes no state: the next step is the one of an executor never asked;
//  - a non-finite output is reported naming the subsystem, the output and the inputs, and the
//    executor goes on (contract 5);
//  - it is refused before a step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../support/same_bits.hpp"
#include "force_displacement_model.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep {
namespace {

using macrostep::testing::same_bits;

struct CubicSystem {
  system::SystemDescription description;
  system::CoupledSystem system;
  std::vector<library::ModelDescription> models;
  std::vector<double> u0;
};

std::unique_ptr<CubicSystem> cubic_system() {
  const config::RunConfig c =
      config::parse_config(macrostep::testing::force_displacement_cubic_two_mass() +
                               "\n[simulation]\nend_time = 0.01\noutput_interval = 1e-3\n",
                           "output-evaluation");
  auto s = std::unique_ptr<CubicSystem>(
      new CubicSystem{*c.system_description, system::build_system(*c.system_description), {}, {}});
  for (const auto& sub : s->description.subsystems) s->models.push_back(sub.model);
  s->u0 = s->system.initial_couplings();
  return s;
}

// Subsystem i's inputs u|_i held constant on [t_begin, t_end] (a degree-0 polynomial).
model::SupportPoints constant(const system::CoupledSystem& sys, std::size_t i,
                              const std::vector<double>& u, double t_begin, double t_end) {
  model::SupportPoints p{};
  p.degree = 0;
  p.channels = static_cast<std::uint32_t>(sys.subsystem(i).input_size());
  p.step_begin = t_begin;
  p.time[0] = t_end;
  std::vector<double> in(p.channels);
  sys.gather_inputs(i, u, in);
  for (std::size_t c = 0; c < in.size(); ++c) p.value[c][0] = in[c];
  return p;
}

// What one executor gives: the step's outputs and ∂y/∂u of subsystem 2, its evaluations at two
// inputs, and the outputs of the next step.
struct Record {
  std::vector<std::vector<double>> values;
};

void step(const CubicSystem& s, executors::Executor& ex, double t0, double t1,
          executors::PassOutcome& outcome) {
  std::vector<executors::SubsystemCommand> commands(2);
  for (std::size_t i = 0; i < 2; ++i) commands[i].nominal = constant(s.system, i, s.u0, t0, t1);
  ex.step(t1, commands, outcome);
  ASSERT_TRUE(outcome.ok) << outcome.error;
}

Record drive(const CubicSystem& s, executors::Executor& ex, bool evaluate) {
  Record r;
  executors::PassOutcome pass;
  executors::EvaluationOutcome e;
  std::vector<std::vector<double>> inputs(2);
  inputs[1] = {1e-3, 0.0};  // not yet stepped: refused
  EXPECT_THROW(ex.evaluate_outputs(inputs, e), std::logic_error);
  step(s, ex, 0.0, 1e-3, pass);
  r.values.push_back(pass.subsystems[1].nominal.outputs);
  r.values.push_back(pass.subsystems[1].nominal.feedthrough);
  if (evaluate) {
    // At the run's own end inputs (constant u0|_2): the reply's values, bit for bit.
    inputs[1] = {s.u0[0], s.u0[1]};
    ex.evaluate_outputs(inputs, e);
    EXPECT_TRUE(e.ok) << e.error;
    EXPECT_TRUE(same_bits(e.subsystems[1].outputs, pass.subsystems[1].nominal.outputs));
    EXPECT_TRUE(same_bits(e.subsystems[1].feedthrough, pass.subsystems[1].nominal.feedthrough));
    EXPECT_TRUE(e.subsystems[0].outputs.empty());  // subsystem 1 was not asked
    inputs[1] = {4e-4, -0.3};
    ex.evaluate_outputs(inputs, e);
    EXPECT_TRUE(e.ok) << e.error;
    r.values.push_back(e.subsystems[1].outputs);
    r.values.push_back(e.subsystems[1].feedthrough);
    // Different inputs, different force (feed-through), the same states.
    EXPECT_NE(e.subsystems[1].outputs[2], pass.subsystems[1].nominal.outputs[2]);
    EXPECT_EQ(e.subsystems[1].outputs[0], pass.subsystems[1].nominal.outputs[0]);
    // A non-finite input makes the output NaN: reported with the subsystem, the executor goes on.
    inputs[1] = {std::nan(""), 0.0};
    ex.evaluate_outputs(inputs, e);
    EXPECT_FALSE(e.ok);
    EXPECT_EQ(e.failed_subsystem, 1u);
    EXPECT_NE(e.error.find("output evaluation at t = 0.001"), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("output \"force\" is nan"), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("\"x_in\" = nan"), std::string::npos) << e.error;
  }
  ex.accept();
  EXPECT_THROW(ex.evaluate_outputs(inputs, e), std::logic_error);  // between steps
  step(s, ex, 1e-3, 2e-3, pass);
  for (std::size_t i = 0; i < 2; ++i) r.values.push_back(pass.subsystems[i].nominal.outputs);
  return r;
}

executors::ProcessOptions process_options(bool host_first) {
  executors::ProcessOptions po;
  po.executable = MACROSTEP_BINARY;
  po.host_first_subsystem = host_first;
  po.threads = 1;
  return po;
}

TEST(OutputEvaluation, IsBitIdenticalInProcessAndInProcessesAndChangesNoState) {
  const auto s = cubic_system();
  ASSERT_TRUE(s->system.evaluated(1));
  executors::InProcessOptions io;
  io.threads = 1;
  std::vector<Record> records;
  {
    executors::InProcessExecutor ex(s->system, s->u0, io);
    records.push_back(drive(*s, ex, true));
  }
  for (const bool host_first : {false, true}) {
    SCOPED_TRACE(host_first ? "processes, subsystem 1 hosted" : "processes");
    executors::ProcessExecutor ex(s->system, s->models, s->u0, process_options(host_first));
    records.push_back(drive(*s, ex, true));
  }
  for (std::size_t k = 1; k < records.size(); ++k) {
    ASSERT_EQ(records[k].values.size(), records[0].values.size());
    for (std::size_t v = 0; v < records[0].values.size(); ++v) {
      EXPECT_TRUE(same_bits(records[k].values[v], records[0].values[v])) << k << " " << v;
    }
  }
  // The next step after evaluations equals the one of an executor never asked.
  executors::InProcessExecutor plain(s->system, s->u0, io);
  const Record never = drive(*s, plain, false);
  const std::size_t n = records[0].values.size();
  EXPECT_TRUE(same_bits(never.values.end()[-1], records[0].values[n - 1]));
  EXPECT_TRUE(same_bits(never.values.end()[-2], records[0].values[n - 2]));
}

}  // namespace
}  // namespace macrostep
