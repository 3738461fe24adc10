// A coupling law and a model of a test-only library (extension/) reach the configuration, the
// co-simulation and the monolithic run through the registries alone: no central file names them.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/library/model_registry.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/system/law_registry.hpp"
#include "macrostep/system/system_description.hpp"
#include "registry_extension.hpp"

namespace {

using namespace macrostep;

// Two bodies joined by two scaled_difference laws of factor c: a spring of stiffness c between
// them, each body taking its own side's force.
constexpr const char* kSystem = R"(
[[subsystem]]
name = "a"
model = "test_body"
mass = 1.0
stiffness = 100.0
x0 = 0.1

[[subsystem]]
name = "b"
model = "test_body"
mass = 2.0

[[connection]]
name = "on_b"
law = "scaled_difference"
from = ["a.x", "b.x"]
to = "b.force"
factor = 30.0

[[connection]]
name = "on_a"
law = "scaled_difference"
from = ["b.x", "a.x"]
to = "a.force"
factor = 30.0

[simulation]
end_time = 0.2
output_interval = 1e-3
)";

class Registries : public ::testing::Test {
 protected:
  void SetUp() override { test::register_registry_extension(); }
};

TEST_F(Registries, TheExtensionIsRegistered) {
  const system::LawEntry* law = system::find_law("scaled_difference");
  ASSERT_NE(law, nullptr);
  EXPECT_EQ(law->reads, 2U);
  const library::ModelEntry* model = library::find_model("test_body");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->parameters.size(), 3U);
  const auto names = system::law_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "spring_damper"), names.end());
  EXPECT_THROW(library::register_model(*model), std::logic_error) << "a name is registered once";
}

TEST_F(Registries, TheConfigurationReadsTheirKeysWithTheUsualMessages) {
  const config::RunConfig c = config::parse_config(kSystem, "ext.toml");
  const system::SystemDescription& d = *c.system_description;
  ASSERT_EQ(d.connections.size(), 2U);
  EXPECT_EQ(d.connections[0].law, "scaled_difference");
  EXPECT_EQ(std::get<library::RegisteredModel>(d.subsystems[1].model).values.number("stiffness"),
            0.0);
  const auto problem = [](std::string text) {
    try {
      (void)config::parse_config(text, "ext.toml");
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string text = kSystem;
  text.replace(text.find("mass = 2.0"), 10, "mass = -2.0");
  EXPECT_EQ(problem(text), "ext.toml:12: subsystem[2].mass: must be > 0 (got -2.0)");
  text = kSystem;
  text.replace(text.find("factor = 30.0"), 13, "factr = 30.0");
  EXPECT_NE(problem(text).find("unknown key for law \"scaled_difference\"; did you mean 'factor'?"),
            std::string::npos)
      << problem(text);
}

// The co-simulation (in-process) and the monolithic run of the same system agree.
TEST_F(Registries, TheSystemRunsCoSimulatedAndMonolithically) {
  const config::RunConfig c = config::parse_config(kSystem, "ext.toml");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("macrostep_registries_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  run::CosimOptions co;
  co.output_file = (dir / "cosim.csv").string();
  co.executor = config::ExecutorKind::kInProcess;  // this test binary is no worker executable
  co.progress = run::MonolithicOptions::Progress::kNever;
  const run::CosimResult cosim = run::run_cosimulation(c, co);
  run::MonolithicOptions mo;
  mo.output_file = (dir / "mono.csv").string();
  mo.stop_time = cosim.final_time;
  mo.progress = run::MonolithicOptions::Progress::kNever;
  const run::MonolithicResult mono = run::run_monolithic(c, mo);
  std::filesystem::remove_all(dir);

  EXPECT_EQ(cosim.columns, mono.columns);
  ASSERT_EQ(cosim.coupling_count, 2U);
  EXPECT_EQ(cosim.columns.back(), "on_a");
  EXPECT_NEAR(cosim.final_time, 0.2, 1e-12);
  ASSERT_EQ(cosim.final_values.size(), mono.final_values.size());
  for (std::size_t j = 0; j < cosim.columns.size(); ++j) {
    EXPECT_TRUE(std::isfinite(cosim.final_values[j])) << cosim.columns[j];
    EXPECT_NEAR(cosim.final_values[j], mono.final_values[j],
                1e-2 * (1.0 + std::abs(mono.final_values[j])))
        << cosim.columns[j];
  }
}

}  // namespace
