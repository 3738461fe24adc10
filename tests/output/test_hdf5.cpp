// HDF5 writer/reader (output/hdf5.hpp): round trip of extreme doubles, the steps
// table's key column, the metadata attributes, and the errors of bad files and names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::output::Hdf5File;
using macrostep::output::OutputError;
using macrostep::output::read_hdf5_table;

class Hdf5 : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("macrostep_test_hdf5_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(Hdf5, RowsReadBackBitForBit) {
  const std::vector<std::vector<double>> rows = {
      {0.0, 1.0, -0.0},
      {0.1, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()},
      {0.30000000000000004, std::nan(""), -std::numeric_limits<double>::infinity()}};
  {
    Hdf5File f(path("r.h5"));
    auto& results = f.add_table("results", "time", {"a", "b"});
    auto& steps = f.add_table("steps", "attempt", {"h"});
    for (const auto& r : rows) results.write_row(r[0], std::vector<double>{r[1], r[2]});
    steps.write_row(1.0, std::vector<double>{2.5});
    EXPECT_EQ(results.rows(), 3u);
    EXPECT_THROW(results.write_row(1.0, std::vector<double>{1.0}), std::invalid_argument);
    f.write_metadata({{"status", "completed"}, {"n", 3}}, {{"status", "completed"}, {"n", 3}});
    f.close();
  }
  const auto t = read_hdf5_table(path("r.h5"));
  ASSERT_EQ(t.columns, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.rows(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(t.time[r], rows[r][0]);
    for (std::size_t c = 0; c < 2; ++c) {
      const double want = rows[r][c + 1];
      const double got = t.values[c][r];
      EXPECT_TRUE(std::isnan(want) ? std::isnan(got)
                                   : got == want && std::signbit(got) == std::signbit(want))
          << r << "," << c;
    }
  }
  const auto s = read_hdf5_table(path("r.h5"), "steps", "attempt");
  EXPECT_EQ(s.time, std::vector<double>{1.0});
  EXPECT_EQ(s.values, (std::vector<std::vector<double>>{{2.5}}));
}

TEST_F(Hdf5, BadFilesAndNamesAreErrorsNamingTheFile) {
  EXPECT_THROW(Hdf5File(path("no/such/dir/r.h5")), OutputError);
  {
    Hdf5File f(path("r.h5"));
    EXPECT_THROW(f.add_table("results", "time", {"a", "a"}), std::invalid_argument);
    EXPECT_THROW(f.add_table("results", "time", {"time"}), std::invalid_argument);
    EXPECT_THROW(f.add_table("results", "time", {""}), std::invalid_argument);
    f.add_table("results", "time", {"a"});
  }
  const auto message = [](const auto& call) {
    try {
      call();
    } catch (const OutputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { read_hdf5_table(path("r.h5"), "steps"); }).find("no dataset /steps"),
            std::string::npos);
  EXPECT_NE(message([&] {
              read_hdf5_table(path("r.h5"), "results", "attempt");
            }).find("the first column must be 'attempt' (got 'time')"),
            std::string::npos);
  EXPECT_NE(message([&] { read_hdf5_table(path("missing.h5")); }).find("missing.h5: cannot open"),
            std::string::npos);
  std::ofstream(path("text.h5")) << "time,a\n0,1\n";
  EXPECT_NE(message([&] { read_hdf5_table(path("text.h5")); }).find("not a readable HDF5 file"),
            std::string::npos);
  // compare's reader goes by the name.
  std::ofstream(path("r.csv")) << "time,a\n0,1\n";
  EXPECT_EQ(macrostep::output::read_result_table(path("r.csv")).columns,
            std::vector<std::string>{"a"});
  EXPECT_TRUE(macrostep::output::is_hdf5_path("x.H5"));
  EXPECT_TRUE(macrostep::output::is_hdf5_path("dir/x.hdf5"));
  EXPECT_FALSE(macrostep::output::is_hdf5_path("x.h5.csv"));
  EXPECT_FALSE(macrostep::output::is_hdf5_path(".h5"));
}

// The steps CSV's key column: written and read back under its own name.
TEST_F(Hdf5, CsvWithAnotherKeyColumn) {
  {
    macrostep::output::CsvWriter w(path("s.csv"), {"t_start", "error_estimate"}, "attempt");
    w.write_row(1.0, std::vector<double>{0.0, std::nan("")});
    w.close();
  }
  std::ifstream in(path("s.csv"));
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "attempt,t_start,error_estimate\n1,0,nan\n");
  const auto t = macrostep::output::read_csv(path("s.csv"), "attempt");
  EXPECT_TRUE(std::isnan(t.values[1][0]));
  EXPECT_THROW(macrostep::output::read_csv(path("s.csv")), OutputError);
  EXPECT_THROW(macrostep::output::CsvWriter(path("t.csv"), {"attempt"}, "attempt"),
               std::invalid_argument);
}

}  // namespace
