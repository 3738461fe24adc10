// SSP import end to end: the package of tests/ssp/data (two oscillator FMUs with four parameter
// bindings and two linear-transformed signal connections) runs to the same bytes as the same
// system written as TOML by hand, in-process and as processes, monolithically, as a reference,
// and resumed from a checkpoint; its unpacked files are removed when the runs end.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "macrostep/ssp/ssp.hpp"
#include "ssp_test_support.hpp"

namespace macrostep::ssp_testing {
namespace {

// tests/ssp/data/SystemStructure.ssd as a hand-written configuration: m1's c from the system's
// set (not its own 300), m2's from the prefixed set (not the inline 1), the inline m and d, the
// connections named after the inputs they feed, gain and offset from the transformations.
std::string hand_written_toml() {
  const std::string fmu = std::string(FMU_DIR) + "/oscillator.fmu";
  return "[simulation]\nend_time = 1.0\noutput_interval = 0.001\n"
         "[[subsystem]]\nname = \"m1\"\nmodel = \"fmu\"\npath = \"" +
         fmu +
         "\"\ninputs = [\"force\"]\noutputs = [\"x\", \"v\"]\n"
         "parameters = {m = 1.0, c = 500.0, d = 0.1, x = 0.01}\n"
         "[[subsystem]]\nname = \"m2\"\nmodel = \"fmu\"\npath = \"" +
         fmu +
         "\"\ninputs = [\"force\"]\noutputs = [\"x\", \"v\"]\n"
         "parameters = {m = 0.5, c = 500.0, d = 0.1, amplitude = 20.0, omega = 7.0}\n"
         "[[connection]]\nname = \"m2_force\"\nlaw = \"signal\"\nfrom = \"m1.x\"\n"
         "to = \"m2.force\"\ngain = 400.0\noffset = 1.5\n"
         "[[connection]]\nname = \"m1_force\"\nlaw = \"signal\"\nfrom = [\"m2.x\"]\n"
         "to = [\"m1.force\"]\ngain = 400.0\n";
}

TEST(SspRun, ThePackageRunsToTheBytesOfTheHandWrittenTomlWithEveryExecutor) {
  const fs::path dir = test_dir("run");
  fs::copy_file(SSP_PACKAGE, dir / "two.ssp");
  write_file(dir / "hand.toml", hand_written_toml());
  const auto run = [&dir](const std::string& args) {
    const AppRun r = macrostep(dir, args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.output;
  };
  run("run hand.toml --executor inprocess --output hand.csv");
  run("run two.ssp --executor inprocess --output inprocess.csv");
  run("run two.ssp --executor processes --output processes.csv");
  const std::string expected = read_file(dir / "hand.csv");
  ASSERT_GT(expected.size(), 1000u);
  EXPECT_EQ(expected.substr(0, expected.find('\n')), "time,m1.x,m1.v,m2.x,m2.v,m2_force,m1_force");
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == expected) << "the SSP's run differs";
  EXPECT_TRUE(read_file(dir / "processes.csv") == expected) << "the processes' run differs";

  // --set edits the SSP's configuration as a file's: the same edit, the same bytes.
  run("run hand.toml --executor inprocess --set cosim.rtol=1e-5 --output hand-set.csv");
  run("run two.ssp --executor inprocess --set cosim.rtol=1e-5 --output set.csv");
  EXPECT_TRUE(read_file(dir / "set.csv") == read_file(dir / "hand-set.csv"));
  EXPECT_FALSE(read_file(dir / "set.csv") == expected) << "--set changed nothing";

  // The monolithic run and the reference; compare reads the results.
  run("run hand.toml --monolithic --output hand-mono.csv");
  run("run two.ssp --monolithic --output mono.csv");
  EXPECT_TRUE(read_file(dir / "mono.csv") == read_file(dir / "hand-mono.csv"));
  run("reference two.ssp");
  ASSERT_TRUE(fs::exists(dir / "two.reference.csv"));
  const AppRun compared = macrostep(dir, "compare inprocess.csv two.reference.csv");
  EXPECT_EQ(compared.status, 0) << compared.output;
  EXPECT_NE(compared.output.find("m2.x"), std::string::npos) << compared.output;

  // The metadata keeps the configuration the SSP describes.
  EXPECT_NE(read_file(dir / "inprocess.json").find("law = \\\"signal\\\""), std::string::npos);
  EXPECT_TRUE(tmp_is_empty(dir)) << "the runs left files in $TMPDIR";
  fs::remove_all(dir);
}

TEST(SspRun, ACheckpointOfAPackageRunResumesToTheSameBytes) {
  const fs::path dir = test_dir("resume");
  fs::copy_file(SSP_PACKAGE, dir / "two.ssp");
  AppRun r = macrostep(dir, "run two.ssp --executor inprocess --output whole.csv");
  ASSERT_EQ(r.status, 0) << r.output;
  r = macrostep(dir,
                "run two.ssp --executor inprocess --output cut.csv --checkpoint-every 20steps");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(fs::exists(dir / "cut.ckpt")) << r.output;
  // The checkpoint's configuration text names the FMUs inside the package, which resume unpacks
  // again: it cuts the CSV back to the checkpoint's rows (here a spoilt tail) and computes the
  // rest again, to the same bytes.
  std::ofstream(dir / "cut.csv", std::ios::app) << "1e9,0,0,0,0,0,0\n";
  r = macrostep(dir, "resume cut.ckpt");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("resuming "), std::string::npos) << r.output;
  EXPECT_TRUE(read_file(dir / "cut.csv") == read_file(dir / "whole.csv"));
  EXPECT_TRUE(tmp_is_empty(dir)) << "the runs left files in $TMPDIR";
  fs::remove_all(dir);
}

// The translation itself: each line's origin, and the unpacked package's lifetime.
TEST(SspTranslation, LinesNameTheirElementsAndThePackageIsRemovedWithTheLastOwner) {
  std::string root;
  {
    const ssp::Translation t = ssp::translate(SSP_PACKAGE);
    ASSERT_NE(t.package, nullptr);
    root = t.package->root();
    EXPECT_EQ(t.base_directory, root);
    EXPECT_TRUE(fs::is_regular_file(fs::path(root) / "resources" / "oscillator.fmu"));
    EXPECT_TRUE(t.has_experiment);
    // m1's c: the system's binding wins over the component's own (SSP 1.0, ssd:ParameterBinding).
    const std::string line = "\"c\" = 500.0";
    const auto at = t.toml.find(line);
    ASSERT_NE(at, std::string::npos) << t.toml;
    const auto number =
        static_cast<std::size_t>(std::count(t.toml.begin(), t.toml.begin() + at, '\n'));
    ASSERT_LT(number, t.origins.size());
    EXPECT_EQ(t.origins[number].file, std::string(SSP_PACKAGE) + "/resources/system.ssv");
    EXPECT_EQ(t.origins[number].line, 6u);
    EXPECT_EQ(t.origins[number].element, "ssv:Parameter \"m1.c\"");
    EXPECT_EQ(t.origins.size(),
              static_cast<std::size_t>(std::count(t.toml.begin(), t.toml.end(), '\n')));
  }
  EXPECT_FALSE(fs::exists(root)) << "the unpacked package outlived its translation";
}

}  // namespace
}  // namespace macrostep::ssp_testing
