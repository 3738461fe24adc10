// End-to-end tests of the `macrostep` executable: exit codes, messages, files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "macrostep/output/csv.hpp"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

class App : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("macrostep_test_app_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
  std::string read_file(const std::string& name) const {
    std::ifstream in(path(name));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Runs `macrostep <args>` in the test directory (args are shell words).
  Outcome macrostep(const std::string& args) const {
    const std::string cmd = "cd '" + dir_.string() + "' && '" MACROSTEP_BINARY "' " + args +
                            " > stdout.txt 2> stderr.txt";
    const int raw = std::system(cmd.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    o.out = read_file("stdout.txt");
    o.err = read_file("stderr.txt");
    return o;
  }

  fs::path dir_;
};

// 10 masses in 2 subsystems (coupling bodies 5 and 6), 2 ms: runs in milliseconds.
const std::string kSmall = R"(description = "test chain"
[model]
masses = 10
seed = 3
mass = 5.0e-2
x0 = {uniform = [-1.0e-5, 1.0e-5]}
v0 = {uniform = [-0.1, 0.1]}
[model.element]
c = 2.5e9
d = 2.5e2
C = 1.0e19
D = 5.0e4
[[model.force]]
type = "harmonic"
all = true
amplitude = {uniform = [1.0e3, 1.0e4]}
omega = {uniform = [1.0e2, 1.0e3]}
[partition]
subsystems = 2
[simulation]
end_time = 2.0e-3
output_interval = 1.0e-4
)";

// The value of the last line "NRMSE (2-norm over N variables): <value>" of `compare`.
double final_nrmse(const std::string& out) {
  const auto line = out.find("NRMSE (2-norm over ");
  if (line == std::string::npos) return -1.0;
  const auto colon = out.find("): ", line);
  if (colon == std::string::npos) return -1.0;
  return std::stod(out.substr(colon + 3));
}

TEST_F(App, BadConfigurationExitsTwoWithFileLineAndKey) {
  const std::string bad = std::string(MACROSTEP_SOURCE_DIR) + "/tests/config/bad/negative_c.toml";
  const Outcome o = macrostep("run '" + bad + "' --monolithic --output r.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err, bad + ":8: model.element.c: must be >= 0 (got -1)\n");
  EXPECT_EQ(o.out, "");
  EXPECT_FALSE(fs::exists(path("r.csv")));
}

TEST_F(App, RunWithoutMonolithicSaysThatNoSchemeExistsYet) {
  write_file("small.toml", kSmall);
  const Outcome o = macrostep("run small.toml");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("no co-simulation scheme is implemented yet"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--monolithic"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("small.csv")));
}

TEST_F(App, CommandLineErrorsExitTwo) {
  write_file("small.toml", kSmall);
  EXPECT_EQ(macrostep("").status, 2);            // no subcommand
  EXPECT_EQ(macrostep("frobnicate").status, 2);  // unknown subcommand
  EXPECT_EQ(macrostep("run small.toml --monolithic --frobnicate").status, 2);
  EXPECT_EQ(macrostep("run").status, 2);  // CONFIG missing
  EXPECT_EQ(macrostep("run small.toml --monolithic --rtol abc").status, 2);
  EXPECT_EQ(macrostep("reference small.toml --rtol 1e-3").status, 2);  // not an option there
  const Outcome stop = macrostep("run small.toml --monolithic --stop-time -1");
  EXPECT_EQ(stop.status, 2);
  EXPECT_EQ(stop.err, "macrostep: --stop-time must be > 0 (got -1)\n");
  const Outcome rtol = macrostep("run small.toml --monolithic --rtol 2");
  EXPECT_EQ(rtol.status, 2);
  EXPECT_EQ(rtol.err, "macrostep: --rtol must be in (0, 1) (got 2)\n");
  const Outcome dir = macrostep("run small.toml --monolithic --output no/such/dir/r.csv");
  EXPECT_EQ(dir.status, 2);
  EXPECT_NE(dir.err.find("no/such/dir/r.csv: cannot create"), std::string::npos) << dir.err;
  const Outcome missing = macrostep("run missing.toml --monolithic");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "missing.toml: cannot open the configuration file\n");
}

TEST_F(App, VersionAndHelpExitZero) {
  const Outcome v = macrostep("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("macrostep ", 0), 0U) << v.out;
  const Outcome h = macrostep("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("compare"), std::string::npos);
}

TEST_F(App, CompareTwoCsvFilesPrintsPerVariableErrorsAndTheNorm) {
  // The hand-computed case of test_nrmse: sqrt(0.2), 1, norm sqrt(1.2).
  write_file("ref.csv", "time,v_1,c_1,x_1\n0,1,2,0\n1,-1,2,1\n2,1,2,2\n3,-1,2,3\n");
  write_file("res.csv", "time,x_1,v_1,c_1\n0,0,1,2\n1,1,-1,2\n2,2,1,2\n3,4,1,5\n");
  const Outcome o = macrostep("compare res.csv ref.csv");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("x_1       4.472136e-01"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("v_1       1.000000e+00"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("excluded, zero reference variance (1): c_1"), std::string::npos) << o.out;
  EXPECT_NEAR(final_nrmse(o.out), std::sqrt(1.2), 1e-6) << o.out;

  const Outcome missing = macrostep("compare res.csv nothing.csv");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nothing.csv: cannot open"), std::string::npos) << missing.err;
  write_file("other.csv", "time,y_1\n0,1\n1,2\n2,3\n3,4\n");
  const Outcome mismatch = macrostep("compare res.csv other.csv");
  EXPECT_EQ(mismatch.status, 2);
  EXPECT_NE(mismatch.err.find("column 'x_1' of the result is not in the reference"),
            std::string::npos)
      << mismatch.err;
}

TEST_F(App, MonolithicRunWritesCouplingBodyStatesAndMetadata) {
  write_file("small.toml", kSmall);
  const Outcome o = macrostep("run small.toml --monolithic");  // default name: small.csv
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("micro steps"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("x_5 ="), std::string::npos) << o.out;

  const auto t = macrostep::output::read_csv(path("small.csv"));
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x_5", "v_5", "x_6", "v_6"}));
  ASSERT_EQ(t.rows(), 21U);
  for (std::size_t i = 0; i < t.rows(); ++i) EXPECT_EQ(t.time[i], static_cast<double>(i) * 1e-4);
  EXPECT_EQ(t.time.back(), 2.0e-3);
  EXPECT_NE(t.values[0].front(), t.values[0].back());  // it moved

  const auto meta = nlohmann::json::parse(read_file("small.json"));
  EXPECT_EQ(meta.at("status"), "completed");
  EXPECT_EQ(meta.at("mode"), "monolithic");
  EXPECT_EQ(meta.at("config").at("text"), kSmall);
  EXPECT_EQ(meta.at("config").at("path"), "small.toml");
  EXPECT_EQ(meta.at("model").at("masses"), 10);
  EXPECT_EQ(meta.at("partition").at("coupling_bodies"), nlohmann::json({5, 6}));
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-6);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-3 * 1e-6);
  EXPECT_GT(meta.at("statistics").at("micro_steps").get<long>(), 20);
  EXPECT_GT(meta.at("statistics").at("residual_evals").get<long>(), 0);
  EXPECT_GT(meta.at("time").at("wall_ns").get<long>(), 0);
  EXPECT_EQ(meta.at("output").at("rows"), 21);
}

TEST_F(App, OptionsOverrideTheConfiguration) {
  write_file("small.toml", kSmall);
  const Outcome o = macrostep(
      "run small.toml --monolithic --all-states --stop-time 1e-3 --rtol 1e-8 "
      "--output all.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto t = macrostep::output::read_csv(path("all.csv"));
  ASSERT_EQ(t.columns.size(), 20U);
  EXPECT_EQ(t.columns.front(), "x_1");
  EXPECT_EQ(t.columns.back(), "v_10");
  EXPECT_EQ(t.rows(), 11U);
  EXPECT_EQ(t.time.back(), 1.0e-3);
  const auto meta = nlohmann::json::parse(read_file("all.json"));
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-8);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-3 * 1e-8);  // follows --rtol
  EXPECT_EQ(meta.at("solver").at("atol_vel"), 1e-8);
  EXPECT_EQ(meta.at("output").at("all_states"), true);
}

TEST_F(App, ReferenceRunAndCompareMeasureTheMonolithicError) {
  write_file("small.toml", kSmall);
  const Outcome ref = macrostep("reference small.toml");  // default name: small.reference.csv
  ASSERT_EQ(ref.status, 0) << ref.err;
  const auto meta = nlohmann::json::parse(read_file("small.reference.json"));
  EXPECT_EQ(meta.at("mode"), "reference");
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-10);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-13);
  EXPECT_EQ(meta.at("solver").at("atol_vel"), 1e-10);

  ASSERT_EQ(macrostep("run small.toml --monolithic --rtol 1e-4 --output loose.csv").status, 0);
  ASSERT_EQ(macrostep("run small.toml --monolithic --rtol 1e-7 --output tight.csv").status, 0);
  const Outcome loose = macrostep("compare loose.csv small.reference.csv");
  const Outcome tight = macrostep("compare tight.csv small.reference.csv");
  ASSERT_EQ(loose.status, 0) << loose.err;
  ASSERT_EQ(tight.status, 0) << tight.err;
  const double e_loose = final_nrmse(loose.out), e_tight = final_nrmse(tight.out);
  EXPECT_GT(e_loose, 0.0) << loose.out;
  EXPECT_GT(e_tight, 0.0) << tight.out;
  // A tighter tolerance is closer to the reference.
  EXPECT_LT(e_tight, e_loose);
  EXPECT_LT(e_loose, 1.0);
}

TEST_F(App, IntegrationFailureExitsOneAndLeavesValidFiles) {
  // At most 3 micro steps per output interval: IDA cannot reach the first output point.
  write_file("fail.toml", kSmall + "[solver]\nmax_steps = 3\n");
  const Outcome o = macrostep("run fail.toml --monolithic");
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(o.err.rfind("macrostep: integration failed at t = ", 0), 0U) << o.err;
  EXPECT_NE(o.err.find("micro steps"), std::string::npos) << o.err;
  const auto t = macrostep::output::read_csv(path("fail.csv"));  // complete rows only
  EXPECT_EQ(t.rows(), 1U);
  EXPECT_EQ(t.time.front(), 0.0);
  const auto meta = nlohmann::json::parse(read_file("fail.json"));
  EXPECT_EQ(meta.at("status"), "failed");
  EXPECT_GT(meta.at("error").at("time").get<double>(), 0.0);
  EXPECT_LT(meta.at("error").at("time").get<double>(), 1e-4);
  EXPECT_EQ(meta.at("output").at("rows"), 1);
}

}  // namespace
