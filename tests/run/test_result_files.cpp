// What a run's files are after ResultFiles::open() fails (result_files.hpp): as they were where
// the result was not touched, else a metadata document that says "failed". An end-to-end test
// (Diagnostics.Hdf5IsLoadedOnlyToWriteAnHdf5File) covers the first case through a missing HDF5
// library; here each case gets a file that breaks between the checks and the open.
#include "result_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "macrostep/config/run_config.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/run/monolithic.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::run::ResultFiles;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ResultFilesOpen : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("macrostep_result_files_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_ = macrostep::config::parse_config(R"([model]
masses = 2
mass = 1.0
[model.element]
c = 1.0e3
[partition]
subsystems = 2
[simulation]
end_time = 0.01
output_interval = 1.0e-3
)",
                                              (dir_ / "chain.toml").string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  ResultFiles::Request request() const {
    ResultFiles::Request r;
    r.config = &config_;
    r.output_file = (dir_ / "r.csv").string();
    r.columns = {"x_1"};
    r.step_subsystems = 2;
    return r;
  }

  fs::path dir_;
  macrostep::config::RunConfig config_;
};

// The results CSV is made, then the steps table cannot be (a directory took its name after the
// checks): the result was touched, so the metadata records the failure instead of "running".
TEST_F(ResultFilesOpen, AFailureAfterTheResultWasWrittenLeavesFailedMetadata) {
  ResultFiles files(request());
  fs::create_directories(files.steps_path());
  EXPECT_THROW(files.open(), macrostep::run::SetupError);
  const nlohmann::json meta = nlohmann::json::parse(read(dir_ / "r.json"));
  EXPECT_EQ(meta.at("status"), "failed");
  EXPECT_EQ(meta.at("error").at("cause"), "output");
  EXPECT_NE(meta.at("error").at("message").get<std::string>().find("r.steps.csv"),
            std::string::npos)
      << meta.dump();
  EXPECT_EQ(meta.at("mode"), "cosimulation");
}

// The result cannot be made after the metadata's claim was written (HDF5 refuses to create a
// file this process holds open): an earlier run's metadata is written back as it was, and the
// result is left alone.
TEST_F(ResultFilesOpen, AFailureBeforeTheResultWasWrittenLeavesTheEarlierMetadata) {
  ResultFiles::Request r = request();
  r.output_file = (dir_ / "r.h5").string();
  {
    ResultFiles earlier(r);
    earlier.open();
    earlier.write_metadata({{"mode", "cosimulation"}, {"status", "completed"}});
  }
  const std::string metadata = read(dir_ / "r.json");
  ASSERT_NE(metadata.find("completed"), std::string::npos);
  macrostep::output::Hdf5File held(r.output_file);
  const std::string result = read(dir_ / "r.h5");
  ResultFiles files(r);
  EXPECT_THROW(files.open(), macrostep::run::SetupError);
  EXPECT_EQ(read(dir_ / "r.json"), metadata);
  EXPECT_EQ(read(dir_ / "r.h5"), result);
}

}  // namespace
