// `--set KEY=VALUE` end to end (docs/reference/configuration.md, "Overrides"): a run with an
// edit gives the bytes of the same run with the value written in the file, in every command
// that reads a configuration; bad edits exit 2 naming the --set before anything is written; the
// metadata holds the edits and the effective configuration, which runs to the same bytes; the
// dedicated flags apply over the edits.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::testing::Outcome;

// The app tests' co-simulation chain (20 ms of controlled explicit macro steps), in-process.
const std::string kSetRunChain = macrostep::testing::kCosim + "executor = \"inprocess\"\n";

class Overrides : public macrostep::testing::BinaryTest {
 protected:
  // `text` with `from` replaced by `to` (which must occur once).
  static std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
    return text.replace(at, from.size(), to);
  }
  nlohmann::json json(const std::string& name) const {
    return nlohmann::json::parse(read_file(name));
  }
  // Runs `command` and expects exit 0.
  void ok(const std::string& command) const {
    const Outcome o = macrostep(command);
    ASSERT_EQ(o.status, 0) << command << "\n" << o.err;
  }
};

TEST_F(Overrides, ARunWithEditsIsTheRunOfTheEditedFile) {
  write_file("c.toml", kSetRunChain);
  std::string edited = replaced(kSetRunChain, "rtol = 1.0e-4", "rtol = 1e-5");
  edited = replaced(edited, "d = 10.0", "d = 20.0");
  write_file("edited.toml", edited);
  ok("run c.toml --set cosim.rtol=1e-5 --set model.element.d=20.0 --output set.csv");
  ok("run edited.toml --output edited.csv");
  ok("run c.toml --output plain.csv");
  const std::string result = read_file("set.csv");
  ASSERT_FALSE(result.empty());
  EXPECT_TRUE(result == read_file("edited.csv")) << "the edited file gives other numbers";
  EXPECT_FALSE(result == read_file("plain.csv")) << "the edits changed nothing";

  const auto meta = json("set.json");
  EXPECT_EQ(meta.at("cosim").at("rtol"), 1e-5);
  const auto& config = meta.at("config");
  EXPECT_EQ(config.at("overrides"), nlohmann::json({"cosim.rtol=1e-5", "model.element.d=20.0"}));
  EXPECT_EQ(config.at("file_text"), kSetRunChain);
  const std::string text = config.at("text");
  EXPECT_EQ(text.rfind("# c.toml with --set cosim.rtol=1e-5 --set model.element.d=20.0\n", 0), 0U)
      << text;
  // The effective configuration runs to the same bytes.
  write_file("effective.toml", text);
  ok("run effective.toml --output effective.csv");
  EXPECT_TRUE(read_file("effective.csv") == result);
  // Without edits: the file's text, an empty list.
  const auto plain = json("plain.json").at("config");
  EXPECT_EQ(plain.at("text"), kSetRunChain);
  EXPECT_EQ(plain.at("overrides"), nlohmann::json::array());
  EXPECT_FALSE(plain.contains("file_text"));
}

TEST_F(Overrides, MonolithicAndReferenceRunsTakeEdits) {
  write_file("c.toml", kSetRunChain);
  write_file("edited.toml", replaced(kSetRunChain, "c = 1.0e6", "c = 2.0e6"));
  for (const std::string kind : {"monolithic", "reference"}) {
    SCOPED_TRACE(kind);
    const std::string command = kind == "reference" ? "reference" : "run --monolithic";
    ok(command + " c.toml --set model.element.c=2e6 --output " + kind + "-set.csv");
    ok(command + " edited.toml --output " + kind + "-edited.csv");
    ok(command + " c.toml --output " + kind + "-plain.csv");
    const std::string result = read_file(kind + "-set.csv");
    EXPECT_TRUE(result == read_file(kind + "-edited.csv"));
    EXPECT_FALSE(result == read_file(kind + "-plain.csv"));
    EXPECT_EQ(json(kind + "-set.json").at("config").at("overrides"),
              nlohmann::json({"model.element.c=2e6"}));
  }
}

TEST_F(Overrides, ADescribedSystemsSubsystemsAreEditedByName) {
  const std::string file =
      read_file(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml");
  write_file("d.toml", file);
  write_file("edited.toml", replaced(file, "kp = 2.0", "kp = 3.0"));
  const std::string run = " --stop-time 0.02 --executor inprocess";
  ok("run d.toml --set subsystem.pi.kp=3.0 --output set.csv" + run);
  ok("run edited.toml --output edited.csv" + run);
  ok("run d.toml --output plain.csv" + run);
  EXPECT_TRUE(read_file("set.csv") == read_file("edited.csv"));
  EXPECT_FALSE(read_file("set.csv") == read_file("plain.csv"));
}

TEST_F(Overrides, BadEditsExitTwoNamingTheSetBeforeAnythingIsWritten) {
  write_file("c.toml", kSetRunChain);
  const auto refused = [this](const std::string& args, const std::string& message) {
    const Outcome o = macrostep(args + " --output r.csv");
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.err.substr(0, message.size()), message) << args;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "not one line: " << o.err;
    EXPECT_EQ(o.out, "") << args;
    EXPECT_FALSE(fs::exists(path("r.csv"))) << args;
    EXPECT_FALSE(fs::exists(path("r.json"))) << args;
  };
  refused("run c.toml --set cosim.rtl=1e-5",
          "--set cosim.rtl=1e-5: cosim.rtl: unknown key; did you mean 'rtol'? (allowed: ");
  refused("run c.toml --set cosim.rtol=2", "--set cosim.rtol=2: cosim.rtol: must be < 1 (got 2)\n");
  refused("run c.toml --monolithic --set model.masses=0",
          "--set model.masses=0: model.masses: must be >= 1 (got 0)\n");
  refused("reference c.toml --set simulation.end_time=soon",
          "--set simulation.end_time=soon: simulation.end_time: must be a number (got string "
          "\"soon\")\n");
  refused("run c.toml --set cosim.rtol", "--set cosim.rtol: must be KEY=VALUE (there is no '=')\n");
  refused(
      "run c.toml --set model.force.2.omega=1",
      "--set model.force.2.omega=1: model.force has 1 element; an index counts from 1 (got 2)\n");
  // Checked when the run's settings are resolved, after reading: named the same way.
  refused("run c.toml --set output.checkpoint_every=often",
          "macrostep: --set output.checkpoint_every=often: output.checkpoint_every 'often': give "
          "seconds");
  // One word per --set: a second one is not taken as an edit.
  const Outcome two = macrostep("run c.toml --set cosim.rtol=1e-5 cosim.safety=3");
  EXPECT_EQ(two.status, 2);
  EXPECT_NE(two.err.find("cosim.safety=3"), std::string::npos) << two.err;
}

TEST_F(Overrides, TheFlagsApplyOverTheEdits) {
  write_file("c.toml", kSetRunChain);
  ok("run c.toml --set cosim.rtol=1e-5 --rtol 1e-3 --set simulation.end_time=0.01 --stop-time "
     "0.005 --set cosim.executor=processes --executor inprocess --output r.csv");
  const auto meta = json("r.json");
  EXPECT_EQ(meta.at("cosim").at("rtol"), 1e-3);
  EXPECT_EQ(meta.at("cosim").at("executor"), "inprocess");
  EXPECT_EQ(meta.at("simulation").at("end_time"), 0.005);
}

// A file with a fixed step: the controller's keys given by --set are checked against the run's
// estimator, which --estimator may choose after the file is read; the file's own are not.
TEST_F(Overrides, ControllerKeysOfEditsFollowTheEstimatorOfTheCommandLine) {
  std::string fixed = replaced(kSetRunChain, "estimator = \"exMD\"\nrtol = 1.0e-4",
                               "estimator = \"none\"\nstep_size = 1.0e-4");
  write_file("f.toml", fixed);
  write_file("controlled.toml", kSetRunChain);
  ok("run f.toml --estimator exMD --rtol 1e-4 --set cosim.atol_pos=1e-9 --set cosim.safety=3 "
     "--output set.csv");
  ok("run controlled.toml --set cosim.step_size=1e-4 --set cosim.atol_pos=1e-9 --set "
     "cosim.safety=3 --output file.csv");
  ASSERT_FALSE(read_file("set.csv").empty());
  EXPECT_TRUE(read_file("set.csv") == read_file("file.csv"));
  EXPECT_EQ(json("set.json").at("cosim").at("atol_pos"), 1e-9);

  const Outcome fixed_run = macrostep("run f.toml --set cosim.safety=3 --output r.csv");
  EXPECT_EQ(fixed_run.status, 2);
  EXPECT_EQ(fixed_run.err,
            "--set cosim.safety=3: cosim.safety: belongs to the macro-step controller, "
            "and cosim.estimator = \"none\" (a fixed step) has none; remove it or choose an "
            "estimator\n");
  EXPECT_FALSE(fs::exists(path("r.csv")));
  const Outcome flag = macrostep("run f.toml --set cosim.r_max=2 --estimator none --output r.csv");
  EXPECT_EQ(flag.status, 2);
  EXPECT_NE(flag.err.find("--set cosim.r_max=2: cosim.r_max: belongs to the macro-step "
                          "controller, and --estimator none (a fixed step)"),
            std::string::npos)
      << flag.err;
  // In the file itself the key is refused when the file is read, with its line.
  write_file("bad.toml", replaced(fixed, "step_size = 1.0e-4", "step_size = 1.0e-4\nsafety = 3"));
  const Outcome in_file = macrostep("run bad.toml --estimator exMD --output r.csv");
  EXPECT_EQ(in_file.status, 2);
  EXPECT_NE(in_file.err.find("bad.toml:"), std::string::npos) << in_file.err;
  EXPECT_NE(in_file.err.find("cosim.safety: belongs to the macro-step controller"),
            std::string::npos)
      << in_file.err;
}

TEST_F(Overrides, StabilityOfAnEditedConfiguration) {
  const std::string file =
      read_file(std::string(MACROSTEP_SOURCE_DIR) + "/configs/two-mass-dd.toml");
  write_file("s.toml", file);
  const std::string scan = " --points 10 --no-plot";
  const Outcome plain = macrostep("stability s.toml" + scan);
  const Outcome set = macrostep("stability s.toml --set subsystem.two.c=2e7" + scan);
  write_file("s.toml", replaced(file, "c = 1.0e7", "c = 2.0e7"));
  const Outcome edited = macrostep("stability s.toml" + scan);
  ASSERT_EQ(set.status, 0) << set.err;
  ASSERT_EQ(edited.status, 0) << edited.err;
  EXPECT_EQ(set.out, edited.out);
  EXPECT_NE(set.out, plain.out);
  const Outcome bad = macrostep("stability s.toml --set subsystem.two.c=-1" + scan);
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.rfind("--set subsystem.two.c=-1: subsystem[2].c: ", 0), 0U) << bad.err;
  const Outcome alone = macrostep("stability --set subsystem.two.c=2e7" + scan);
  EXPECT_EQ(alone.status, 2);
  EXPECT_EQ(alone.err, "macrostep: --set edits a configuration: give CONFIG\n");
}

}  // namespace
