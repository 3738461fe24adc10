// Each concept the configuration names has one name table: parse and to_string are inverse over
// it, the TOML reader accepts exactly its names, and a wrong name is refused with the table's
// names as the allowed ones. (The command line's side: tests/app/test_vocabulary_cli.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config_message.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"

namespace {

using macrostep::testing::config_message;

using namespace macrostep;

const std::string kFourMassChain = R"(
[model]
masses = 4
[model.element]
c = 1.0
[partition]
subsystems = 2
[simulation]
end_time = 1.0
output_interval = 0.5
)";

// "\"a\", \"b\"": the reader's list of allowed names.
std::string quoted(const std::vector<std::string_view>& names) {
  std::string out;
  for (const auto name : names) out += (out.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  return out;
}

template <typename Table, typename Parse, typename ToString>
void expect_round_trip(const Table& table, Parse parse, ToString to_string,
                       const std::vector<std::string_view>& names) {
  ASSERT_EQ(names.size(), table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& [value, name] = table[i];
    EXPECT_EQ(names[i], name);
    EXPECT_EQ(parse(name), value) << name;
    EXPECT_EQ(std::string_view(to_string(value)), name);
  }
  EXPECT_FALSE(parse("bogus").has_value());
  EXPECT_FALSE(parse("").has_value());
}

TEST(Vocabulary, ParseAndToStringAreInverseOverEveryTable) {
  expect_round_trip(
      config::kCosimSchemeNames, [](std::string_view n) { return config::parse_scheme(n); },
      [](config::CosimScheme v) { return config::to_string(v); }, config::scheme_names());
  expect_round_trip(
      config::kPredictorNames, [](std::string_view n) { return config::parse_predictor(n); },
      [](config::PredictorKind v) { return config::to_string(v); }, config::predictor_names());
  expect_round_trip(
      config::kGaussSeidelEndValueNames,
      [](std::string_view n) { return config::parse_gauss_seidel_end_value(n); },
      [](config::GaussSeidelEndValue v) { return config::to_string(v); },
      config::gauss_seidel_end_value_names());
  expect_round_trip(
      config::kExecutorNames, [](std::string_view n) { return config::parse_executor(n); },
      [](config::ExecutorKind v) { return config::to_string(v); }, config::executor_names());
  expect_round_trip(
      config::kMicroStepStopNames,
      [](std::string_view n) { return config::parse_micro_step_stop(n); },
      [](config::MicroStepStop v) { return config::to_string(v); },
      config::micro_step_stop_names());
  expect_round_trip(
      control::kEstimatorNames, [](std::string_view n) { return control::parse_estimator(n); },
      [](control::Estimator v) { return control::to_string(v); }, control::estimator_names());
  expect_round_trip(
      control::kOrderStrategyNames,
      [](std::string_view n) { return control::parse_order_strategy(n); },
      [](control::OrderStrategy v) { return control::to_string(v); },
      control::order_strategy_names());
  expect_round_trip(
      runner::kJumpPolicyNames, [](std::string_view n) { return runner::parse_jump_policy(n); },
      [](runner::JumpPolicy v) { return runner::to_string(v); }, runner::jump_policy_names());
  expect_round_trip(
      ida::kLinearSolverNames, [](std::string_view n) { return ida::parse_linear_solver(n); },
      [](ida::LinearSolver v) { return ida::to_string(v); }, ida::linear_solver_names());
  expect_round_trip(
      corrector::kJacobianNames, [](std::string_view n) { return corrector::parse_jacobian(n); },
      [](corrector::JacobianKind v) { return corrector::jacobian_name(v); },
      corrector::JacobianRegistry::instance().names());
}

TEST(Vocabulary, TheReaderAcceptsEverySchemeAndPredictorAndRefusesOthers) {
  for (const auto& [scheme, name] : config::kCosimSchemeNames) {
    // Scheme auto chooses by the error estimate: it has no fixed-step form.
    const std::string step = scheme == config::CosimScheme::kAuto
                                 ? "estimator = \"exMD\"\n"
                                 : "estimator = \"none\"\nstep_size = 1e-3\norder = 1\n";
    const auto c = config::parse_config(
        kFourMassChain + "[cosim]\nscheme = \"" + std::string(name) + "\"\n" + step, "t.toml");
    EXPECT_EQ(c.cosim.scheme, scheme) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\nscheme = \"jacobi\"\n")
                .find("cosim.scheme: must be one of " + quoted(config::scheme_names()) +
                      " (got \"jacobi\")"),
            std::string::npos);
  for (const auto& [predictor, name] : config::kPredictorNames) {
    const auto c = config::parse_config(
        kFourMassChain + "[cosim]\npredictor = \"" + std::string(name) + "\"\n", "t.toml");
    EXPECT_EQ(c.cosim.predictor, predictor) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\npredictor = \"spline\"\n")
                .find("must be one of " + quoted(config::predictor_names())),
            std::string::npos);
}

TEST(Vocabulary, TheReaderAcceptsEveryEstimatorOfItsScheme) {
  for (const auto& [estimator, name] : control::kEstimatorNames) {
    const bool fits_explicit = config::estimator_fits(config::CosimScheme::kExplicit, estimator);
    const std::string scheme = fits_explicit ? "explicit" : "implicit";
    const std::string step =
        estimator == control::Estimator::kNone ? "step_size = 1e-3\norder = 1\n" : "";
    const auto c =
        config::parse_config(kFourMassChain + "[cosim]\nscheme = \"" + scheme +
                                 "\"\nestimator = \"" + std::string(name) + "\"\n" + step,
                             "t.toml");
    EXPECT_EQ(c.cosim.estimator, estimator) << name;
    EXPECT_STREQ(control::to_string(c.cosim.estimator), std::string(name).c_str());
  }
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\nestimator = \"exXX\"\n")
                .find("must be one of " + quoted(control::estimator_names())),
            std::string::npos);
  // The scheme's own estimators, its default first and none last.
  EXPECT_NE(
      config_message(kFourMassChain + "[cosim]\nscheme = \"implicit\"\nestimator = \"exLE\"\n")
          .find("(allowed: \"imMD\", \"imCV\", \"none\")"),
      std::string::npos);
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\nestimator = \"imCV\"\n")
                .find("(allowed: \"exMD\", \"exLE\", \"exCV\", \"none\")"),
            std::string::npos);
}

TEST(Vocabulary, TheReaderAcceptsTheOrderStrategiesAFileChooses) {
  for (const std::string name : {"ida", "conservative"}) {
    const auto c = config::parse_config(
        kFourMassChain + "[cosim]\norder_strategy = \"" + name + "\"\n", "t.toml");
    EXPECT_STREQ(control::to_string(c.cosim.order_strategy), name.c_str());
  }
  // "fixed" is what order = K implies, not a choice of the file.
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\norder_strategy = \"fixed\"\n")
                .find("must be one of \"ida\", \"conservative\" (got \"fixed\")"),
            std::string::npos);
}

TEST(Vocabulary, TheReaderAcceptsEveryJumpPolicyAndLinearSolverAndMicroStepStop) {
  for (const auto& [policy, name] : runner::kJumpPolicyNames) {
    const auto c = config::parse_config(
        kFourMassChain + "[cosim]\njump_handling = \"" + std::string(name) + "\"\n", "t.toml");
    EXPECT_EQ(c.cosim.jump_handling, policy) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\njump_handling = \"drop\"\n")
                .find("must be one of " + quoted(runner::jump_policy_names())),
            std::string::npos);
  for (const auto& [solver, name] : ida::kLinearSolverNames) {
    const auto c = config::parse_config(
        kFourMassChain + "[solver]\nlinear_solver = \"" + std::string(name) + "\"\n", "t.toml");
    EXPECT_EQ(c.solver.linear_solver, solver) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[solver]\nlinear_solver = \"gmres\"\n")
                .find("must be one of " + quoted(ida::linear_solver_names())),
            std::string::npos);
  for (const auto& [stop, name] : config::kMicroStepStopNames) {
    const auto c = config::parse_config(
        kFourMassChain + "[solver]\nmicro_step_stop = \"" + std::string(name) + "\"\n", "t.toml");
    EXPECT_EQ(c.solver.micro_step_stop, stop) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[solver]\nmicro_step_stop = \"late\"\n")
                .find("must be one of " + quoted(config::micro_step_stop_names())),
            std::string::npos);
}

TEST(Vocabulary, TheReaderTakesTheJacobianNamesFromTheRegistry) {
  const auto names = corrector::JacobianRegistry::instance().names();
  for (const auto name : names) {
    const auto c =
        config::parse_config(kFourMassChain + "[cosim]\nscheme = \"implicit\"\njacobian = \"" +
                                 std::string(name) + "\"\n",
                             "t.toml");
    EXPECT_EQ(c.cosim.jacobian, name);
  }
  EXPECT_NE(
      config_message(kFourMassChain + "[cosim]\nscheme = \"implicit\"\njacobian = \"numeric\"\n")
          .find("must be one of " + quoted(names) + " (got \"numeric\")"),
      std::string::npos);
}

TEST(Vocabulary, TheFileNamesEveryExecutorButTheBridge) {
  for (const auto& [executor, name] : config::kExecutorNames) {
    const std::string text = kFourMassChain + "[cosim]\nexecutor = \"" + std::string(name) + "\"\n";
    if (executor == config::ExecutorKind::kMpi) {
      EXPECT_NE(config_message(text).find("\"mpi\" is chosen on the command line of an MPI job"),
                std::string::npos);
      continue;
    }
    EXPECT_EQ(config::parse_config(text, "t.toml").cosim.executor, executor) << name;
  }
  EXPECT_NE(config_message(kFourMassChain + "[cosim]\nexecutor = \"threads\"\n")
                .find("must be one of \"inprocess\", \"processes\" (got \"threads\")"),
            std::string::npos);
}

}  // namespace
