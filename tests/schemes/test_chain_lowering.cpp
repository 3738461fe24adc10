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
#include <sstream>
#include <string>

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
)";

struct Run {
  std::vector<std::string> columns;
  std::string body;  // the CSV after its header line
};

Run cosimulate(const std::string& text, const std::string& scheme, bool all_states) {
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
  Run r;
  r.columns = run::run_cosimulation(c, o).columns;
  std::ifstream in(o.output_file);
  std::stringstream text_in;
  text_in << in.rdbuf();
  r.body = text_in.str().substr(text_in.str().find('\n'));
  std::filesystem::remove_all(dir);
  return r;
}

TEST(ChainLowering, HandWrittenSegmentsGiveTheChainsBits) {
  for (const char* scheme : {"explicit", "implicit"}) {
    SCOPED_TRACE(scheme);
    const Run chain = cosimulate(std::string(kModel) + kPartition, scheme, false);
    const Run described = cosimulate(std::string(kModel) + kSegments, scheme, false);
    EXPECT_EQ(chain.columns, (std::vector<std::string>{"x_3", "v_3", "x_4", "v_4", "x_5", "v_5",
                                                       "lambda_1", "lambda_2"}));
    EXPECT_GT(chain.body.size(), 1000U);
    EXPECT_TRUE(chain.body == described.body) << "the coupling forces differ";
    const Run chain_states = cosimulate(std::string(kModel) + kPartition, scheme, true);
    const Run described_states = cosimulate(std::string(kModel) + kSegments, scheme, true);
    EXPECT_EQ(chain_states.columns.front(), "x_1");
    EXPECT_EQ(described_states.columns.front(), "a.x_1");
    EXPECT_TRUE(chain_states.body == described_states.body) << "the states differ";
  }
}

}  // namespace
