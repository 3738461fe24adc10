// The chain syntax ([model] + [partition]) lowered into a system description when the file is
// loaded (system::chain_description): chain-segment subsystems, a spring_damper connection per
// cut carrying the cut element's law, the chain's names (x_17, v_17 by global 1-based mass index,
// lambda_L), the uncut chain for the monolithic run, and the chain's facts as its origin.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/system/spring_damper_law.hpp"
#include "macrostep/system/system_description.hpp"
#include "macrostep/system/uncut_system.hpp"

namespace {

using namespace macrostep;

// Five masses cut 2 | 1 | 2: the middle segment's one mass is next to both cuts.
constexpr const char* kChain = R"(
[model]
masses = 5
seed = 7
x0 = {uniform = [-1.0e-3, 1.0e-3]}
v0 = {uniform = [-1.0e-2, 1.0e-2]}

[model.element]
c = 1.0e4
d = 2.0
C = 1.0e8

[[model.element_override]]
first = 4
c = 3.0e4

[partition]
sizes = [2, 1, 2]

[simulation]
end_time = 0.01
output_interval = 1e-3
)";

std::vector<std::string> names(const std::vector<system::NamedOutput>& outputs) {
  std::vector<std::string> out;
  for (const auto& o : outputs) out.push_back(o.name);
  return out;
}

TEST(ChainLowering, ChainBecomesSegmentsAndSpringDamperConnections) {
  const config::RunConfig c = config::parse_config(kChain, "chain.toml");
  ASSERT_TRUE(c.system_description.has_value());
  const system::SystemDescription& d = *c.system_description;
  EXPECT_EQ(d.naming, system::Naming::kGlobal);
  ASSERT_EQ(d.subsystems.size(), 3U);
  EXPECT_EQ(d.subsystems[1].name, "segment_2");
  const auto& middle = std::get<library::ChainSegmentDescription>(d.subsystems[1].model);
  EXPECT_EQ(middle.first, 2U);
  EXPECT_EQ(middle.last, 3U);
  const library::ChainParameters p = config::realize_chain(c);
  ASSERT_EQ(d.connections.size(), 2U);
  for (std::size_t k = 0; k < 2; ++k) {
    const system::DescribedConnection& cut = d.connections[k];
    EXPECT_EQ(cut.name, "lambda_" + std::to_string(k + 1));
    EXPECT_EQ(cut.law, "spring_damper");
    const library::ElementLaw& law =
        system::law_parameters<system::SpringDamperParameters>(*cut.parameters, cut.law).element;
    // Cut k is element boundaries[k+1] (0-based): elements 3 and 4 (1-based), the second one
    // the override's.
    const library::ElementLaw& element = p.element[c.partition.boundaries[k + 1]];
    EXPECT_EQ(law.c, element.c);
    EXPECT_EQ(law.d, element.d);
    EXPECT_EQ(law.C, element.C);
  }
  const auto cut_c = [&](std::size_t k) {
    return system::law_parameters<system::SpringDamperParameters>(*d.connections[k].parameters,
                                                                  "spring_damper")
        .element.c;
  };
  EXPECT_EQ(cut_c(0), 1.0e4);
  EXPECT_EQ(cut_c(1), 3.0e4);
  ASSERT_TRUE(d.chain.has_value());
  EXPECT_EQ(d.chain->masses(), 5U);
  EXPECT_EQ(d.chain->seed, 7U);
  EXPECT_EQ(d.chain->boundaries, (std::vector<std::size_t>{0, 2, 3, 5}));
  EXPECT_EQ(d.chain->coupling_bodies(), c.partition.coupling_bodies());
  EXPECT_EQ(config::subsystem_count(c), 3U);
  EXPECT_NO_THROW(config::check_cosimulation(c));
}

TEST(ChainLowering, ColumnsKeepTheChainsNames) {
  const config::RunConfig c = config::parse_config(kChain, "chain.toml");
  const system::SystemDescription& d = *c.system_description;
  const system::CoupledSystem s = system::build_system(d);
  // The coupling bodies, left then right of each cut; the middle mass once as a column, but
  // watched on both sides by the estimators.
  EXPECT_EQ(names(system::result_outputs(d, s)),
            (std::vector<std::string>{"x_2", "v_2", "x_3", "v_3", "x_4", "v_4"}));
  std::vector<std::string> monitored;
  for (const auto& m : s.monitored_outputs()) monitored.push_back(m.name);
  EXPECT_EQ(monitored,
            (std::vector<std::string>{"x_2", "v_2", "x_3", "v_3", "x_3", "v_3", "x_4", "v_4"}));
  EXPECT_EQ(s.coupling_name(0), "lambda_1");
  EXPECT_EQ(s.coupling_name(1), "lambda_2");
  EXPECT_EQ(system::variable_name(d, 2, s.subsystem(2).state_name(0)), "x_4");

  // The monolithic run's columns are the same names, read from the uncut chain.
  const system::UncutSystem uncut(d);
  EXPECT_EQ(uncut.model().state_size(), 10U);
  EXPECT_EQ(uncut.read_names(),
            (std::vector<std::string>{"x_2", "v_2", "x_3", "v_3", "x_4", "v_4"}));
  EXPECT_EQ(uncut.coupling_names(), (std::vector<std::string>{"lambda_1", "lambda_2"}));
}

// The uncut chain's coupling variables are the cut elements' forces on its states.
TEST(ChainLowering, UncutChainEvaluatesEachCutByItsLaw) {
  const config::RunConfig c = config::parse_config(kChain, "chain.toml");
  const system::SystemDescription& d = *c.system_description;
  const system::UncutSystem uncut(d);
  const library::ChainParameters p = config::realize_chain(c);
  std::vector<double> z(10), zp(10), u(2);
  uncut.model().initial_state({}, z, zp);
  uncut.evaluate_couplings(z, u);
  // Element 2 joins masses 2 and 3 (states 2, 3 and 4, 5); element 3 masses 3 and 4.
  EXPECT_EQ(u[0], p.element[2].force(z[4] - z[2], z[5] - z[3]));
  EXPECT_EQ(u[1], p.element[3].force(z[6] - z[4], z[7] - z[5]));
  EXPECT_NE(u[0], 0.0);
}

TEST(ChainLowering, SetPartitionCutsTheSameChainAgain) {
  config::RunConfig c = config::parse_config(kChain, "chain.toml");
  const auto params = c.system_description->chain->params;
  config::set_partition(c, {0, 1, 5});
  const system::SystemDescription& d = *c.system_description;
  ASSERT_EQ(d.subsystems.size(), 2U);
  EXPECT_EQ(d.chain->params, params);  // not realized again
  EXPECT_EQ(d.chain->seed, 7U);
  EXPECT_EQ(c.partition.boundaries, (std::vector<std::size_t>{0, 1, 5}));
  const system::CoupledSystem s = system::build_system(d);
  EXPECT_EQ(names(system::result_outputs(d, s)),
            (std::vector<std::string>{"x_1", "v_1", "x_2", "v_2"}));
}

// Without [partition] the chain is one segment: no connection, and the monolithic run writes
// every state.
TEST(ChainLowering, UnpartitionedChainIsOneSegment) {
  std::string text = kChain;
  text.replace(text.find("[partition]"), std::string("[partition]\nsizes = [2, 1, 2]\n").size(),
               "");
  const config::RunConfig c = config::parse_config(text, "chain.toml");
  EXPECT_EQ(c.system_description->subsystems.size(), 1U);
  EXPECT_TRUE(c.system_description->connections.empty());
  EXPECT_TRUE(system::UncutSystem(*c.system_description).read_names().empty());
  EXPECT_THROW(config::check_cosimulation(c), config::ConfigError);
}

// A [[subsystem]] description keeps its qualified names and has no chain or uncut model.
TEST(ChainLowering, DescriptionsKeepQualifiedNames) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml");
  const system::SystemDescription& d = *c.system_description;
  EXPECT_EQ(d.naming, system::Naming::kQualified);
  EXPECT_FALSE(d.chain.has_value());
  EXPECT_FALSE(d.whole.has_value());
  EXPECT_EQ(system::variable_name(d, 0, "phi_1"), "motor.phi_1");
  EXPECT_THROW((void)config::realize_chain(c), config::ConfigError);
}

// The element law has one reader: [model.element], [[model.element_override]] and a
// spring_damper [[connection]] refuse the same value with the same words at their own key.
TEST(ChainLowering, ElementLawHasOneSetOfRules) {
  const auto problem = [](const std::string& text) {
    try {
      (void)config::parse_config(text, "law.toml");
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string element = kChain;
  element.replace(element.find("C = 1.0e8"), 9, "ex = 0.5");
  EXPECT_EQ(problem(element), "law.toml:11: model.element.ex: must be >= 1 (got 0.5)");
  std::string override_ = kChain;
  override_.replace(override_.find("c = 3.0e4"), 9, "ex = 0.5");
  EXPECT_EQ(problem(override_),
            "law.toml:15: model.element_override[1].ex: must be >= 1 (got 0.5)");
  std::string connection = std::string(R"(
[model]
masses = 2

[model.element]
c = 1.0

[[subsystem]]
name = "a"
model = "chain_segment"
masses = [1, 1]

[[subsystem]]
name = "b"
model = "chain_segment"
masses = [2, 2]

[[connection]]
name = "cut"
law = "spring_damper"
from = ["a.x_1", "a.v_1", "b.x_2", "b.v_2"]
to = ["a.lambda@2", "b.lambda@2"]
c = 1.0
ex = 0.5

[simulation]
end_time = 0.01
output_interval = 1e-3
)");
  EXPECT_EQ(problem(connection), "law.toml:24: connection[1].ex: must be >= 1 (got 0.5)");
  connection.replace(connection.find("ex = 0.5"), 8, "d = -1");
  element = kChain;
  element.replace(element.find("d = 2.0"), 7, "d = -1");
  EXPECT_EQ(problem(connection), "law.toml:24: connection[1].d: must be >= 0 (got -1)");
  EXPECT_EQ(problem(element), "law.toml:10: model.element.d: must be >= 0 (got -1)");
}

}  // namespace
