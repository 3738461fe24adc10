// The chain syntax is lowered into a system description when a file is loaded: a [model] chain
// cut by [partition] and the same chain cut by hand into [[subsystem]] chain segments joined by
// spring_damper [[connection]]s with the cut elements' laws are one model, and their
// co-simulations give the same numbers bit for bit (only the column names differ: the lowered
// chain keeps the chain's global names, the hand-written description qualifies them). The
// macro step is fixed: the estimators watch the same outputs in both, but in a different order.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/cosimulation.hpp"

namespace {

using namespace macrostep;

// Seven masses cut 3 | 1 | 3 (a one-mass segment next to both cuts), cubic elements, a
// harmonic force on two masses.
constexpr const char* kModel = R"(
[model]
masses = 7
seed = 3
x0 = {uniform = [-1.0e-3, 1.0e-3]}
v0 = {uniform = [-1.0e-2, 1.0e-2]}

[model.element]
c = 1.0e4
d = 2.0
C = 1.0e9

[[model.element_override]]
first = 5
c = 2.0e4
D = 10.0

[[model.force]]
type = "harmonic"
masses = [2, 6]
amplitude = 5.0
omega = 300.0

[simulation]
end_time = 0.02
output_interval = 1e-3

[cosim]
estimator = "none"
step_size = 2e-4
order = 2
)";

constexpr const char* kPartition = R"(
[partition]
sizes = [3, 1, 3]
)";

// Element 4 joins masses 3 and 4 (the [model.element] law), element 5 masses 4 and 5 (the
// override's).
constexpr const char* kSegments = R"(
[[subsystem]]
name = "a"
model = "chain_segment"
masses = [1, 3]

[[subsystem]]
name = "b"
model = "chain_segment"
masses = [4, 4]

[[subsystem]]
name = "c"
model = "chain_segment"
masses = [5, 7]

[[connection]]
name = "cut_4"
law = "spring_damper"
from = ["a.x_3", "a.v_3", "b.x_4", "b.v_4"]
to = ["a.lambda@4", "b.lambda@4"]
c = 1.0e4
d = 2.0
C = 1.0e9

[[connection]]
name = "cut_5"
law = "spring_damper"
from = ["b.x_4", "b.v_4", "c.x_5", "c.v_5"]
to = ["b.lambda@5", "c.lambda@5"]
c = 2.0e4
d = 2.0
C = 1.0e9
D = 10.0

# Rows at the macro points, as the chain writes them.
[output]
rows = "macro"
)";

// A result CSV as columns of text (the CSV writes every double exactly, so equal text is equal
// bits).
using Columns = std::map<std::string, std::vector<std::string>>;

Columns cosimulate(const std::string& text, const std::string& scheme, bool all_states) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("macrostep_chain_lowering_" + std::to_string(::getpid()) + "_" + scheme);
  std::filesystem::create_directories(dir);
  const config::RunConfig c = config::parse_config(text, (dir / "c.toml").string());
  run::CosimOptions o;
  o.output_file = (dir / "r.csv").string();
  o.executor = config::ExecutorKind::kInProcess;  // this test binary is no worker executable
  o.scheme = scheme == "implicit" ? config::CosimScheme::kImplicit : config::CosimScheme::kExplicit;
  o.all_states = all_states;
  o.progress = run::MonolithicOptions::Progress::kNever;
  (void)run::run_cosimulation(c, o);
  std::ifstream in(o.output_file);
  std::vector<std::string> names;
  Columns columns;
  for (std::string line; std::getline(in, line);) {
    std::stringstream fields(line);
    std::size_t k = 0;
    for (std::string field; std::getline(fields, field, ','); ++k) {
      if (names.size() <= k) {
        names.push_back(field);
      } else {
        columns[names[k]].push_back(field);
      }
    }
  }
  std::filesystem::remove_all(dir);
  return columns;
}

TEST(ChainLowering, HandWrittenSegmentsGiveTheChainsBits) {
  // Chain column -> the hand-written description's column of the same quantity.
  const std::vector<std::pair<std::string, std::string>> same = {
      {"time", "time"}, {"x_3", "a.x_3"},      {"v_3", "a.v_3"},
      {"x_4", "b.x_4"}, {"v_4", "b.v_4"},      {"x_5", "c.x_5"},
      {"v_5", "c.v_5"}, {"lambda_1", "cut_4"}, {"lambda_2", "cut_5"}};
  for (const char* scheme : {"explicit", "implicit"}) {
    SCOPED_TRACE(scheme);
    const Columns chain = cosimulate(std::string(kModel) + kPartition, scheme, false);
    const Columns described = cosimulate(std::string(kModel) + kSegments, scheme, false);
    EXPECT_EQ(chain.size(), same.size());  // the coupling bodies and the coupling forces
    for (const auto& [ours, theirs] : same) {
      ASSERT_EQ(chain.count(ours), 1U) << ours;
      ASSERT_EQ(described.count(theirs), 1U) << theirs;
      EXPECT_GT(chain.at(ours).size(), 10U);
      EXPECT_TRUE(chain.at(ours) == described.at(theirs)) << ours << " differs from " << theirs;
    }
    // Every state: the same values under the chain's and the qualified names.
    const Columns chain_states = cosimulate(std::string(kModel) + kPartition, scheme, true);
    const Columns described_states = cosimulate(std::string(kModel) + kSegments, scheme, true);
    ASSERT_EQ(chain_states.size(), described_states.size());
    for (std::size_t m = 1; m <= 7; ++m) {
      const std::string segment = m <= 3 ? "a." : m == 4 ? "b." : "c.";
      for (const char* q : {"x_", "v_"}) {
        const std::string name = q + std::to_string(m);
        ASSERT_EQ(chain_states.count(name), 1U) << name;
        EXPECT_TRUE(chain_states.at(name) == described_states.at(segment + name)) << name;
      }
    }
  }
}

}  // namespace
