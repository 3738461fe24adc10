// `macrostep suggest-partition` (beyond the seeds): on a small multirate chain cut at
// its mass jumps (seed 000 §5.4: the cut between 10 kg and 0.1 kg bodies is the slow one), the
// suggested cuts must co-simulate the trial interval in fewer macro steps than the configured
// ones, measured by running both; and every bad use is one message with exit status 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::BinaryTest;

const std::string kMultirateChain = R"(description = "light masses 11..15 between heavy ones"
[model]
masses = 30
seed = 1
mass = 10.0
x0 = {uniform = [-1.0e-4, 1.0e-4]}
v0 = {uniform = [-1.0e-2, 1.0e-2]}
[model.element]
c = 1.0e7
d = 1.0e3
C = 1.0e14
D = 1.0e4
[[model.mass_override]]
first = 11
last = 15
mass = 0.1
[[model.force]]
type = "modified_sine"
fraction = 0.2
amplitude = {signed_uniform = [1.0e5, 1.0e6]}
omega = {uniform = [7.5e2, 1.0e3]}
exponent = 95
[partition]
sizes = [10, 5, 15]   # cut at both mass jumps
[simulation]
end_time = 0.02
output_interval = 1.0e-4
[cosim]
scheme = "explicit"
estimator = "exCV"
rtol = 1.0e-5
)";

// The accepted + rejected macro steps of a run's summary ("macro steps A accepted, R rejected").
long attempts(const std::string& out) {
  std::smatch m;
  const std::regex line(R"(macro steps (\d+) accepted, (\d+) rejected)");
  if (!std::regex_search(out, m, line)) return -1;
  return std::stol(m[1]) + std::stol(m[2]);
}

class SuggestPartition : public BinaryTest {};

TEST_F(SuggestPartition, SuggestedCutsTakeFewerMacroStepsThanTheCutsAtTheMassJumps) {
  write_file("chain.toml", kMultirateChain);
  const auto s = macrostep(
      "suggest-partition chain.toml --trial-time 0.005 --cores 2 --output better.toml "
      "--indicators cuts.csv");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("prediction over the trial"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("trial with every cut moved by -2:"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("trial with cuts moved by +1, -1, ... alternately:"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("fastest trial: "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("wrote better.toml"), std::string::npos) << s.out;

  // The written file: the same model with [partition] sizes of 3 blocks covering the 30 masses.
  const std::string text = read_file("better.toml");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\nsizes = \[(\d+), (\d+), (\d+)\])")))
      << text;
  const std::vector<int> sizes{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), 30);
  EXPECT_NE(sizes, (std::vector<int>{10, 5, 15}));
  EXPECT_EQ(text.find("cut at both mass jumps"), std::string::npos);  // the old table is gone
  EXPECT_NE(text.find("[[model.mass_override]]"), std::string::npos);
  // One indicator per interior element; the configured cuts (elements 11 and 16) measured.
  const std::string cuts = read_file("cuts.csv");
  EXPECT_EQ(std::count(cuts.begin(), cuts.end(), '\n'), 30);
  EXPECT_NE(cuts.find("\n11,10,11,"), std::string::npos) << cuts;
  EXPECT_TRUE(std::regex_search(cuts, std::regex(R"(\n16,15,16,[0-9.e+]+,trial\n)"))) << cuts;

  // The schedule of the written cuts as a --pin map (master free, each subsystem on its core's
  // PU), which the process executor takes as it is.
  std::smatch pin;
  if (std::thread::hardware_concurrency() >= 2) {
    ASSERT_TRUE(std::regex_search(text, pin, std::regex(R"(--pin (map:\*(/[0-9]+){3})\n)")))
        << text;
    const auto pinned = macrostep("run better.toml --stop-time 1e-4 --executor processes --pin " +
                                  pin[1].str() + " --output p.csv");
    EXPECT_EQ(pinned.status, 0) << pinned.err;
  }

  const auto configured = macrostep("run chain.toml --stop-time 0.005 --output a.csv");
  const auto suggested = macrostep("run better.toml --stop-time 0.005 --output b.csv");
  ASSERT_EQ(configured.status, 0) << configured.err;
  ASSERT_EQ(suggested.status, 0) << suggested.err;
  EXPECT_GT(attempts(configured.out), 0);
  EXPECT_GT(attempts(suggested.out), 0);
  EXPECT_LT(attempts(suggested.out), attempts(configured.out));
}

TEST_F(SuggestPartition, BadUseIsOneMessageAndExitTwo) {
  write_file("chain.toml", kMultirateChain);
  const std::string described = std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml";
  const struct {
    std::string args, message;
  } cases[] = {
      {"suggest-partition '" + described + "'", "suggest-partition cuts a [model] chain"},
      {"suggest-partition chain.toml --subsystems 1", "--subsystems: between 2 and 30"},
      {"suggest-partition chain.toml --subsystems 31", "--subsystems: between 2 and 30"},
      {"suggest-partition chain.toml --trial-time 1", "--trial-time: in (0, 0.02]"},
      {"suggest-partition chain.toml --executor mpi", "--executor: inprocess or processes"},
      {"suggest-partition chain.toml --window -1", "--window: 0 or more masses"},
      {"suggest-partition chain.toml --output chain.toml",
       "is the configuration chain.toml itself"},
      {"suggest-partition chain.toml --subsystems 0",
       "--subsystems: must be an integer >= 1 (got 0)"},
      {"suggest-partition chain.toml --trial-time -1", "--trial-time: must be > 0 (got -1)"},
      {"suggest-partition chain.toml --cores 0", "--cores: must be an integer >= 1 (got 0)"},
      {"suggest-partition chain.toml --cores 1.5", "--cores: must be an integer >= 1 (got 1.5)"},
      {"suggest-partition missing.toml", "missing.toml"},
  };
  for (const auto& c : cases) {
    const auto o = macrostep(c.args);
    EXPECT_EQ(o.status, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << c.args << "\n" << o.err;
  }
}

}  // namespace
