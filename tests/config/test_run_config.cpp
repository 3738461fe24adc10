// parse_config: what a valid configuration turns into, defaults, value forms, coupling-body
// resolution, and the error cases whose exact message needs more than a corpus file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config_message.hpp"
#include "macrostep/config/run_config.hpp"

namespace {

using macrostep::testing::config_message;

using macrostep::config::ConfigError;
using macrostep::config::CosimConfig;
using macrostep::config::CosimScheme;
using macrostep::config::ExecutorKind;
using macrostep::config::parse_config;
using macrostep::config::PredictorKind;
using macrostep::config::RunConfig;
using macrostep::control::Estimator;
using macrostep::control::OrderStrategy;
using macrostep::ida::LinearSolver;
using macrostep::library::EndCondition;
using macrostep::library::ForceType;
using macrostep::library::MassSelection;
using macrostep::library::ValueSpec;

const std::string kMinimal = R"(
[model]
masses = 9
[model.element]
c = 1.0
[simulation]
end_time = 1.0
output_interval = 0.5
)";

TEST(RunConfig, MinimalConfigurationGetsDocumentedDefaults) {
  const RunConfig c = parse_config(kMinimal, "dir/min.toml");
  EXPECT_EQ(c.path, "dir/min.toml");
  EXPECT_EQ(c.text, kMinimal);
  EXPECT_EQ(c.chain.masses, 9U);
  EXPECT_EQ(c.chain.seed, 1U);
  EXPECT_EQ(c.chain.mass.kind, ValueSpec::Kind::kFixed);
  EXPECT_EQ(c.chain.mass.a, 1.0);
  EXPECT_EQ(c.chain.left, EndCondition::kFixed);
  EXPECT_EQ(c.chain.right, EndCondition::kFixed);
  EXPECT_EQ(c.chain.element.c, 1.0);
  EXPECT_EQ(c.chain.element.d, 0.0);
  EXPECT_EQ(c.chain.element.ex, 3.0);
  EXPECT_TRUE(c.chain.forces.empty());
  // No [partition]: one subsystem, no cut.
  EXPECT_EQ(c.partition.boundaries, (std::vector<std::size_t>{0, 9}));
  EXPECT_TRUE(c.partition.coupling_bodies().empty());
  // Seed 000 §5 defaults.
  EXPECT_EQ(c.solver.rtol, 1e-6);
  EXPECT_DOUBLE_EQ(c.solver.effective_atol_pos(), 1e-9);
  EXPECT_EQ(c.solver.effective_atol_vel(), 1e-6);
  EXPECT_EQ(c.solver.linear_solver, LinearSolver::kKlu);
  EXPECT_EQ(c.solver.max_order, 5);
  EXPECT_EQ(c.simulation.end_time, 1.0);
  EXPECT_EQ(c.simulation.output_interval, 0.5);
  EXPECT_TRUE(c.output.file.empty());
  EXPECT_FALSE(c.output.all_states);
}

TEST(RunConfig, EveryKeyOfTheSchemaIsRead) {
  const RunConfig c = parse_config(R"(
description = "all keys"
[model]
type = "chain"
masses = 12
seed = 7
mass = {uniform = [1.0, 2.0]}
left_end = "free"
right_end = "fixed"
x0 = {signed_uniform = [0.5, 1.5]}
v0 = {linear = 0.25}
[model.element]
c = 1.0
d = 2.0
C = 3.0
D = 4.0
ex = 5
ev = 7.0
modulation = {amplitude = 0.5, omega = 0.25, period = 4}
[[model.mass_override]]
first = 2
last = 3
mass = 9.0
[[model.mass_override]]
first = 12
mass = 8.0
[[model.element_override]]
first = 5
last = 6
d = 11.0
ex = 4
[[model.force]]
type = "harmonic"
masses = [12, 1]
amplitude = 5.0
omega = {uniform = [1.0, 2.0]}
phase = 0.5
alternate_sign = true
[[model.force]]
type = "contact"
fraction = 0.25
amplitude = -0.01
stiffness = 1e7
[[model.force]]
type = "impulse"
coupling_bodies = true
amplitude = 1e6
times = [0.1, 0.2]
duration = 1e-3
edge = 2e-6
[[model.force]]
type = "impulse"
all = true
amplitude = 1.0
time = {uniform = [0.0, 0.5]}
duration = 0.1
[[model.force]]
type = "modified_sine"
masses = [3]
amplitude = {signed_uniform = [1.0, 2.0]}
omega = 50
exponent = 5
[partition]
sizes = [5, 4, 3]
[solver]
rtol = 1e-4
atol_pos = 1e-8
atol_vel = 1e-5
linear_solver = "dense"
max_order = 3
max_steps = 1000
[simulation]
end_time = 2.0
output_interval = 0.1
[output]
file = "out/r.csv"
all_states = true
)",
                                   "all.toml");
  EXPECT_EQ(c.description, "all keys");
  EXPECT_EQ(c.chain.masses, 12U);
  EXPECT_EQ(c.chain.seed, 7U);
  EXPECT_EQ(c.chain.mass.kind, ValueSpec::Kind::kUniform);
  EXPECT_EQ(c.chain.mass.b, 2.0);
  EXPECT_EQ(c.chain.left, EndCondition::kFree);
  EXPECT_EQ(c.chain.x0.kind, ValueSpec::Kind::kSignedUniform);
  EXPECT_EQ(c.chain.x0.a, 0.5);
  EXPECT_EQ(c.chain.v0.kind, ValueSpec::Kind::kLinear);
  EXPECT_EQ(c.chain.v0.a, 0.25);
  EXPECT_EQ(c.chain.element.D, 4.0);
  EXPECT_EQ(c.chain.element.ex, 5.0);
  EXPECT_EQ(c.chain.element.ev, 7.0);
  EXPECT_EQ(c.chain.element.modulation_amplitude, 0.5);
  EXPECT_EQ(c.chain.element.modulation_period, 4U);
  ASSERT_EQ(c.chain.mass_overrides.size(), 2U);
  EXPECT_EQ(c.chain.mass_overrides[0].last, 3U);
  EXPECT_EQ(c.chain.mass_overrides[1].first, 12U);
  EXPECT_EQ(c.chain.mass_overrides[1].last, 12U);  // last defaults to first
  ASSERT_EQ(c.chain.element_overrides.size(), 1U);
  EXPECT_EQ(*c.chain.element_overrides[0].d, 11.0);
  EXPECT_EQ(*c.chain.element_overrides[0].ex, 4.0);
  EXPECT_FALSE(c.chain.element_overrides[0].c.has_value());

  ASSERT_EQ(c.chain.forces.size(), 5U);
  const auto& harmonic = c.chain.forces[0];
  EXPECT_EQ(harmonic.type, ForceType::kHarmonic);
  EXPECT_EQ(harmonic.selection.kind, MassSelection::Kind::kList);
  EXPECT_EQ(harmonic.selection.masses, (std::vector<std::size_t>{12, 1}));
  EXPECT_EQ(harmonic.omega.kind, ValueSpec::Kind::kUniform);
  EXPECT_EQ(harmonic.phase.a, 0.5);
  EXPECT_TRUE(harmonic.alternate_sign);
  const auto& contact = c.chain.forces[1];
  EXPECT_EQ(contact.type, ForceType::kContact);
  EXPECT_EQ(contact.selection.kind, MassSelection::Kind::kFraction);
  EXPECT_EQ(contact.selection.fraction, 0.25);
  EXPECT_EQ(contact.stiffness.a, 1e7);
  const auto& pulses = c.chain.forces[2];
  // Partition [0, 5, 9, 12]: cuts after masses 5 and 9.
  EXPECT_EQ(pulses.selection.masses, (std::vector<std::size_t>{5, 6, 9, 10}));
  EXPECT_EQ(pulses.times, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(pulses.duration, 1e-3);
  EXPECT_EQ(pulses.edge, 2e-6);
  const auto& pulse = c.chain.forces[3];
  EXPECT_EQ(pulse.selection.kind, MassSelection::Kind::kAll);
  EXPECT_TRUE(pulse.times.empty());
  EXPECT_EQ(pulse.time.kind, ValueSpec::Kind::kUniform);
  EXPECT_EQ(pulse.edge, 1e-6);  // default
  const auto& sine = c.chain.forces[4];
  EXPECT_EQ(sine.type, ForceType::kModifiedSine);
  EXPECT_EQ(sine.exponent, 5.0);
  EXPECT_EQ(sine.omega.a, 50.0);

  EXPECT_EQ(c.partition.boundaries, (std::vector<std::size_t>{0, 5, 9, 12}));
  EXPECT_EQ(c.solver.rtol, 1e-4);
  EXPECT_EQ(c.solver.effective_atol_pos(), 1e-8);
  EXPECT_EQ(c.solver.effective_atol_vel(), 1e-5);
  EXPECT_EQ(c.solver.linear_solver, LinearSolver::kDense);
  EXPECT_EQ(c.solver.max_order, 3);
  EXPECT_EQ(c.solver.max_steps, 1000);
  EXPECT_EQ(c.output.file, "out/r.csv");
  EXPECT_TRUE(c.output.all_states);
}

TEST(RunConfig, EqualPartitionGivesTheFirstSubsystemsTheRemainder) {
  const RunConfig c = parse_config(kMinimal + "[partition]\nsubsystems = 4\n", "p.toml");
  // 9 masses in 4 subsystems: 3, 2, 2, 2 (MODELS.md §1.5, chain.hpp equal_partition).
  EXPECT_EQ(c.partition.boundaries, (std::vector<std::size_t>{0, 3, 5, 7, 9}));
  EXPECT_EQ(c.partition.subsystems(), 4U);
  EXPECT_EQ(c.partition.coupling_bodies(), (std::vector<std::size_t>{3, 4, 5, 6, 7, 8}));
}

TEST(RunConfig, ExplicitInitialValuesReplaceTheDrawsAndContactBodiesStartOutsideTheWall) {
  const RunConfig c = parse_config(R"(
[model]
masses = 3
x0 = [0.5, -0.25, 1]
v0 = [1, 2, 3]
[model.element]
c = 1.0
[[model.force]]
type = "contact"
masses = [1]
amplitude = -0.01
stiffness = 10
[simulation]
end_time = 1.0
output_interval = 0.5
)",
                                   "x.toml");
  EXPECT_EQ(c.chain.x0_values, (std::vector<double>{0.5, -0.25, 1.0}));
  const auto p = macrostep::config::realize_chain(c);
  EXPECT_EQ(p.x0, (std::vector<double>{-0.5, -0.25, 1.0}));
  EXPECT_EQ(p.v0, (std::vector<double>{1.0, 2.0, 3.0}));
}

TEST(RunConfig, RtolOverrideMovesOnlyTheTolerancesThatWereNotGiven) {
  RunConfig c = parse_config(kMinimal + "[solver]\nrtol = 1e-4\natol_vel = 5e-3\n", "s.toml");
  c.solver.rtol = 1e-8;  // what --rtol does
  EXPECT_DOUBLE_EQ(c.solver.effective_atol_pos(), 1e-11);
  EXPECT_EQ(c.solver.effective_atol_vel(), 5e-3);
}

TEST(RunConfig, DefaultOutputFilesAreDerivedFromTheConfigStem) {
  using macrostep::config::default_output_file;
  using macrostep::config::ResultKind;
  RunConfig c = parse_config(kMinimal, "configs/k-5.1.toml");
  EXPECT_EQ(default_output_file(c, ResultKind::kCosimulation), "k-5.1.csv");
  EXPECT_EQ(default_output_file(c, ResultKind::kMonolithic), "k-5.1.monolithic.csv");
  EXPECT_EQ(default_output_file(c, ResultKind::kReference), "k-5.1.reference.csv");
  c.output.file = "out/run.csv";
  EXPECT_EQ(default_output_file(c, ResultKind::kCosimulation), "out/run.csv");
  EXPECT_EQ(default_output_file(c, ResultKind::kMonolithic), "out/run.monolithic.csv");
  EXPECT_EQ(default_output_file(c, ResultKind::kReference), "out/run.reference.csv");
}

TEST(RunConfig, TheFirstProblemInFileOrderIsReported) {
  // Both keys are unknown; the parser orders a table by key, the report must still name line 3.
  EXPECT_EQ(config_message("\n[model]\nzzz = 1\naaa = 2\n"),
            "t.toml:3: model.zzz: unknown key (allowed: type, masses, seed, mass, left_end, "
            "right_end, x0, v0, element, mass_override, element_override, force)");
}

TEST(RunConfig, MessagesQuoteTheValueAsWritten) {
  EXPECT_EQ(config_message(kMinimal + "[solver]\nrtol = -1.5e-3\n"),
            "t.toml:10: solver.rtol: must be > 0 (got -1.5e-3)");
  EXPECT_EQ(config_message(kMinimal + "[solver]\nrtol = 1\n"),
            "t.toml:10: solver.rtol: must be < 1 (got 1)");
  // Columns after a character of several bytes, and a value at the end of a long line.
  EXPECT_EQ(config_message("output = {file = \"é€\", checkpoint_every = -1.5e-3}" + kMinimal),
            "t.toml:1: output.checkpoint_every: must be > 0 (got -1.5e-3)");
  std::string long_line =
      "[model]\nmasses = 3\nx0 = [" + std::string(100'000, ' ') + "1, 2, \"é\"]";
  EXPECT_EQ(config_message(long_line),
            "t.toml:3: model.x0[3]: must be a number (got string \"é\")");
}

// A one-line array of 200 000 numbers (a chain's x0) is read exactly. (A parser whose time is
// quadratic in the length of a line takes minutes here; no time is asserted.)
TEST(RunConfig, AOneLineArrayOfTwoHundredThousandNumbersIsReadExactly) {
  constexpr std::size_t kMasses = 200'000;
  std::vector<double> expected;
  std::string text = "[model]\nmasses = 200000\nx0 = [";
  for (std::size_t i = 0; i < kMasses; ++i) {
    // Exact in binary and in decimal: the parsed value must be the written one.
    expected.push_back(static_cast<double>(i % 4001) * 0.125 - 250.0);
    text += (i > 0 ? ", " : "") + std::to_string(expected.back());  // "-249.875000"
  }
  text += "]\n[model.element]\nc = 1.0\n[simulation]\nend_time = 1.0\noutput_interval = 0.5\n";
  const RunConfig c = parse_config(text, "long.toml");
  ASSERT_EQ(c.chain.x0_values.size(), kMasses);
  EXPECT_EQ(c.chain.x0_values, expected);
}

TEST(RunConfig, DottedKeysAndInlineTablesAreCheckedLikeHeaders) {
  EXPECT_EQ(config_message(kMinimal + "[output]\nfile.name = \"x\"\n"),
            "t.toml:10: output.file: must be a string (got table)");
  EXPECT_EQ(config_message(kMinimal + "[partition]\nsubsystems = 2\n[solver]\nrtol = {a = 1}\n"),
            "t.toml:12: solver.rtol: must be a number (got table)");
}

TEST(RunConfig, SyntaxErrorsCarryTheirLine) {
  const std::string m = config_message("[model]\nmasses = [1, 2\n");
  EXPECT_EQ(m.rfind("t.toml:", 0), 0U) << m;
  EXPECT_NE(m.find("syntax error"), std::string::npos) << m;
}

// [cosim]: defaults (METHODS.md §9, D-48, MODELS.md §1.7), every key, the fixed-step form.
TEST(CosimConfig, AbsentTableGivesTheDocumentedDefaults) {
  const RunConfig c = parse_config(kMinimal, "t.toml");
  const CosimConfig& k = c.cosim;
  EXPECT_FALSE(k.given);
  EXPECT_EQ(k.scheme, CosimScheme::kExplicit);
  EXPECT_EQ(k.estimator, Estimator::kExMD);
  EXPECT_FALSE(k.order.has_value());
  EXPECT_TRUE(k.effective_order().automatic);
  EXPECT_EQ(k.highest_order(), 5);
  EXPECT_EQ(k.order_strategy, OrderStrategy::kIdaLike);
  EXPECT_FALSE(k.step_size.has_value());
  EXPECT_EQ(k.rtol, 1e-4);
  EXPECT_DOUBLE_EQ(k.effective_atol_pos(), 1e-7);
  EXPECT_EQ(k.effective_atol_vel(), 1e-4);
  EXPECT_DOUBLE_EQ(k.effective_atol_u(), 1.0);
  EXPECT_EQ(k.safety, 6.0);
  EXPECT_EQ(k.r_min, 0.5);
  EXPECT_EQ(k.r_max, 1.5);
  EXPECT_TRUE(k.dead_zone);
  EXPECT_FALSE(k.h_max.has_value());
  EXPECT_EQ(k.predictor, PredictorKind::kLagrange);
  EXPECT_EQ(k.least_squares_points, 8);
  EXPECT_EQ(k.output_every, 1);
  EXPECT_EQ(k.executor, ExecutorKind::kInProcess);
  EXPECT_FALSE(k.executor_given);  // the run picks: processes for more than one subsystem
  EXPECT_EQ(k.threads, 0);
}

TEST(CosimConfig, ExecutorProcessesIsRead) {
  const RunConfig c = parse_config(kMinimal + R"([cosim]
executor = "processes"
)",
                                   "t.toml");
  EXPECT_EQ(c.cosim.executor, ExecutorKind::kProcesses);
  EXPECT_TRUE(c.cosim.executor_given);
}

TEST(CosimConfig, EveryControlledKeyIsRead) {
  const RunConfig c = parse_config(kMinimal + R"([cosim]
scheme = "explicit"
estimator = "exLE"
order = "auto"
order_strategy = "conservative"
step_size = 1e-8
rtol = 1e-5
atol_pos = 2e-9
atol_vel = 3e-6
atol_u = 0.5
safety = 3
r_min = 0.25
r_max = 2.0
dead_zone = false
h_max = 1e-4
predictor = "least_squares"
least_squares_points = 10
output_every = 5
executor = "inprocess"
threads = 3
)",
                                   "t.toml");
  const CosimConfig& k = c.cosim;
  EXPECT_TRUE(k.given);
  EXPECT_EQ(k.line, 9U);
  EXPECT_EQ(k.estimator, Estimator::kExLE);
  ASSERT_TRUE(k.order.has_value());
  EXPECT_TRUE(k.order->automatic);
  EXPECT_EQ(k.order_strategy, OrderStrategy::kConservative);
  EXPECT_EQ(k.step_size, 1e-8);
  EXPECT_EQ(k.rtol, 1e-5);
  EXPECT_EQ(k.effective_atol_pos(), 2e-9);
  EXPECT_EQ(k.effective_atol_vel(), 3e-6);
  EXPECT_EQ(k.effective_atol_u(), 0.5);
  EXPECT_EQ(k.safety, 3.0);
  EXPECT_EQ(k.r_min, 0.25);
  EXPECT_EQ(k.r_max, 2.0);
  EXPECT_FALSE(k.dead_zone);
  EXPECT_EQ(k.h_max, 1e-4);
  EXPECT_EQ(k.predictor, PredictorKind::kLeastSquares);
  EXPECT_EQ(k.least_squares_points, 10);
  EXPECT_EQ(k.output_every, 5);
  EXPECT_EQ(k.threads, 3);
  EXPECT_STREQ(macrostep::control::to_string(k.estimator), "exLE");
  EXPECT_STREQ(macrostep::control::to_string(k.order_strategy), "conservative");
  EXPECT_STREQ(macrostep::config::to_string(k.predictor), "least_squares");
}

TEST(CosimConfig, FixedStepTakesTheSizeAndDegree) {
  const RunConfig c = parse_config(
      kMinimal + "[cosim]\nestimator = \"none\"\nstep_size = 1e-5\norder = 1\n", "t.toml");
  EXPECT_TRUE(c.cosim.fixed_step());
  EXPECT_EQ(c.cosim.step_size, 1e-5);
  EXPECT_FALSE(c.cosim.effective_order().automatic);
  EXPECT_EQ(c.cosim.effective_order().kappa, 1);
  // Without an order the fixed step uses kappa = 2 (METHODS.md §9).
  const RunConfig d =
      parse_config(kMinimal + "[cosim]\nestimator = \"none\"\nstep_size = 1e-5\n", "t.toml");
  EXPECT_EQ(d.cosim.effective_order().kappa, 2);
  EXPECT_FALSE(d.cosim.effective_order().automatic);
  // A fixed order with an estimator: controlled H at that degree; strategies do not apply.
  const RunConfig e = parse_config(kMinimal + "[cosim]\norder = 4\nrtol = 1e-6\n", "t.toml");
  EXPECT_EQ(e.cosim.highest_order(), 4);
  EXPECT_FALSE(e.cosim.fixed_step());
  // The least-squares fit with a fixed low degree may use few points.
  const RunConfig f = parse_config(
      kMinimal + "[cosim]\norder = 1\npredictor = \"least_squares\"\nleast_squares_points = 3\n",
      "t.toml");
  EXPECT_EQ(f.cosim.least_squares_points, 3);
}

TEST(CosimConfig, RtolOverrideMovesOnlyTheTolerancesThatWereNotGiven) {
  RunConfig c = parse_config(kMinimal + "[cosim]\nrtol = 1e-4\natol_u = 7.0\n", "t.toml");
  c.cosim.rtol = 1e-6;  // what --rtol does in a co-simulation
  EXPECT_DOUBLE_EQ(c.cosim.effective_atol_pos(), 1e-9);
  EXPECT_EQ(c.cosim.effective_atol_vel(), 1e-6);
  EXPECT_EQ(c.cosim.effective_atol_u(), 7.0);
}

TEST(CosimConfig, ACoSimulationNeedsTwoSubsystems) {
  using macrostep::config::check_cosimulation;
  const RunConfig two = parse_config(kMinimal + "[partition]\nsubsystems = 2\n", "t.toml");
  EXPECT_NO_THROW(check_cosimulation(two));
  const RunConfig one = parse_config(kMinimal + "[partition]\nsubsystems = 1\n", "t.toml");
  try {
    check_cosimulation(one);
    FAIL() << "accepted one subsystem";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "t.toml:9: partition: a co-simulation needs at least two subsystems (got 1); "
                 "run the whole model with --monolithic");
  }
  const RunConfig none = parse_config(kMinimal, "t.toml");
  try {
    check_cosimulation(none);
    FAIL() << "accepted a model without [partition]";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 0U);
    EXPECT_EQ(std::string(e.what()).rfind("t.toml: partition: a co-simulation needs at least "
                                          "two subsystems, and without [partition]",
                                          0),
              0U)
        << e.what();
  }
}

TEST(ConfigError, FormatsWithAndWithoutLineAndPath) {
  EXPECT_STREQ(ConfigError("a.toml", 12, "model.c", "bad").what(), "a.toml:12: model.c: bad");
  EXPECT_STREQ(ConfigError("a.toml", 0, "simulation", "missing").what(),
               "a.toml: simulation: missing");
  EXPECT_STREQ(ConfigError("a.toml", 3, "", "syntax").what(), "a.toml:3: syntax");
}

}  // namespace
