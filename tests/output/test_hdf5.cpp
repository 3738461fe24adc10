// HDF5 writer/reader (output/hdf5.hpp): round trip of extreme doubles, the steps
// table's key column, the metadata attributes, and the errors of bad files and names; the HDF5
// library loaded on first use (src/hdf5_library.hpp), and the errors of one that cannot be.
// This program does not link HDF5: every HDF5 file it writes or reads goes through that loader.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hdf5_library.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::output::Hdf5File;
using macrostep::output::OutputError;
using macrostep::output::read_hdf5_table;
using macrostep::output::detail::hdf5_library;
using macrostep::output::detail::load_hdf5_library;

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

// The message of the OutputError that `call` throws.
template <class F>
std::string error_of(const F& call) {
  try {
    call();
  } catch (const OutputError& e) {
    return e.what();
  }
  return "no error";
}

// Before the other cases, so that in this program the first use of HDF5 is a read.
TEST_F(Hdf5, ReadingAFileThatIsNotHdf5IsAnErrorNamingIt) {
  std::ofstream(path("text.h5")) << "time,a\n0,1\n";
  std::ofstream(path("empty.h5")).flush();
  for (const char* name : {"text.h5", "empty.h5"}) {
    EXPECT_EQ(error_of([&] { read_hdf5_table(path(name)); }),
              path(name) + ": cannot open: not a readable HDF5 file");
  }
}

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
  EXPECT_NE(error_of([&] { read_hdf5_table(path("r.h5"), "steps"); }).find("no dataset /steps"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              read_hdf5_table(path("r.h5"), "results", "attempt");
            }).find("the first column must be 'attempt' (got 'time')"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_hdf5_table(path("missing.h5")); }).find("missing.h5: cannot open"),
            std::string::npos);
  std::ofstream(path("text.h5")) << "time,a\n0,1\n";
  EXPECT_NE(error_of([&] { read_hdf5_table(path("text.h5")); }).find("not a readable HDF5 file"),
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

// A library that the loader does not find: an error naming the file, the library and the
// loader's reason, not a crash.
TEST(Hdf5Library, AMissingLibraryIsAnErrorNamingFileLibraryAndReason) {
  const char* soname = "libmacrostep_no_such_hdf5.so.103";
  ASSERT_EQ(dlopen(soname, RTLD_NOW | RTLD_LOCAL), nullptr);
  const std::string reason = dlerror();
  EXPECT_EQ(error_of([&] { load_hdf5_library(soname, "out.h5", "HDF5 output"); }),
            "out.h5: HDF5 output needs libmacrostep_no_such_hdf5.so.103, which could not be "
            "loaded: " +
                reason);
}

// A library that is not HDF5 (the C maths library): the first missing symbol is named.
TEST(Hdf5Library, ALibraryWithoutHdf5IsAnErrorNamingTheMissingSymbol) {
  const std::string message =
      error_of([] { load_hdf5_library("libm.so.6", "in.h5", "HDF5 input"); });
  EXPECT_EQ(message.rfind("in.h5: HDF5 input needs libm.so.6, which could not be loaded: it lacks "
                          "the symbol H5open (",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("undefined symbol: H5open"), std::string::npos) << message;
}

// The process's library is loaded once: every use has the same table, with HDF5's constants.
TEST(Hdf5Library, LoadedOnceWithItsConstants) {
  const auto& h5 = hdf5_library("a.h5", "HDF5 output");
  EXPECT_EQ(&hdf5_library("b.h5", "HDF5 input"), &h5);
  EXPECT_GT(h5.H5T_NATIVE_DOUBLE_g, 0);
  EXPECT_GT(h5.H5P_CLS_DATASET_CREATE_ID_g, 0);
}

}  // namespace
