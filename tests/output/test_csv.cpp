// CSV writer/reader and JSON metadata writer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/child_processes.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/metadata.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::output::CsvTable;
using macrostep::output::CsvWriter;
using macrostep::output::OutputError;
using macrostep::output::read_csv;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("macrostep_test_output_" + std::to_string(::getpid()) + "_" + info->name());
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
  fs::path dir_;
};

using Csv = TempDir;

TEST_F(Csv, RoundTripIsBitExact) {
  const std::vector<double> tricky = {1.0 / 3.0,
                                      0.1,
                                      -0.0,
                                      1e-300,
                                      std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::max(),
                                      -2.718281828459045,
                                      123456789012345678.0};
  {
    CsvWriter w(path("r.csv"), {"x_1", "v_1"});
    for (std::size_t i = 0; i < tricky.size(); ++i) {
      const double row[2] = {tricky[i], -tricky[tricky.size() - 1 - i]};
      w.write_row(0.1 * static_cast<double>(i), row);
    }
    EXPECT_EQ(w.rows(), tricky.size());
    w.close();
  }
  const CsvTable t = read_csv(path("r.csv"));
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x_1", "v_1"}));
  ASSERT_EQ(t.rows(), tricky.size());
  for (std::size_t i = 0; i < tricky.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.time[i]),
              std::bit_cast<std::uint64_t>(0.1 * static_cast<double>(i)));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.values[0][i]),
              std::bit_cast<std::uint64_t>(tricky[i]));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.values[1][i]),
              std::bit_cast<std::uint64_t>(-tricky[tricky.size() - 1 - i]));
  }
  EXPECT_EQ(t.column_index("v_1"), 1U);
  EXPECT_FALSE(t.column_index("x_2").has_value());
}

TEST_F(Csv, HeaderStartsWithTime) {
  {
    CsvWriter w(path("h.csv"), {"x_17", "lambda_1"});
    const double row[2] = {1.5, -2.0};
    w.write_row(0.0, row);
  }
  EXPECT_EQ(read_file("h.csv"), "time,x_17,lambda_1\n0,1.5,-2\n");
}

TEST_F(Csv, RowsReachTheFileBeforeCloseSoAFailedRunLeavesAValidFile) {
  CsvWriter w(path("open.csv"), {"a"});
  const double one[1] = {1.0};
  w.write_row(0.0, one);
  w.write_row(1.0, one);
  // Read while the writer is still open: both rows must be there, complete.
  const CsvTable t = read_csv(path("open.csv"));
  EXPECT_EQ(t.rows(), 2U);
}

// Hostile input: when the file system takes only part of a row (a full disk; here the
// file-size limit, in a child process), the part is cut off again: the file ends with the last
// complete row, and the message names the file and the reason.
TEST_F(Csv, ARefusedWriteLeavesOnlyCompleteRows) {
  const std::string file = path("r.csv");
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{1000, 1000};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    try {
      CsvWriter w(file, {"a", "b"});
      for (int i = 0; i < 1000; ++i) {
        const std::vector<double> row = {1.0 / 3.0, -2.0 / 7.0};
        w.write_row(i * 1e-3, row);
      }
      _exit(11);  // never refused
    } catch (const OutputError& e) {
      const std::string m = e.what();
      const std::string expect = file + ": write failed: " + std::strerror(EFBIG) + " (";
      _exit(m.rfind(expect, 0) == 0 && m.find("complete rows kept)") != std::string::npos ? 0 : 12);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string text = read_file("r.csv");
  ASSERT_FALSE(text.empty());
  EXPECT_LE(text.size(), 1000u);
  EXPECT_GT(text.size(), 900u);  // only the torn row is missing
  EXPECT_EQ(text.back(), '\n');
  const CsvTable t = read_csv(file);
  EXPECT_GT(t.rows(), 10u);
}

// Hostile input: the result file is close-on-exec (no worker process inherits it).
TEST_F(Csv, TheFileIsCloseOnExec) {
  CsvWriter w(path("r.csv"), {"a"});
  int found = 0;
  for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(fd.path(), ec) != fs::path(path("r.csv"))) continue;
    ++found;
    const int flags = fcntl(std::stoi(fd.path().filename().string()), F_GETFD);
    EXPECT_NE(flags & FD_CLOEXEC, 0);
  }
  EXPECT_EQ(found, 1);
}

TEST_F(Csv, WriterRejectsBadNamesSizesAndPaths) {
  EXPECT_THROW(CsvWriter(path("a.csv"), {"time"}), std::invalid_argument);
  EXPECT_THROW(CsvWriter(path("a.csv"), {"x,1"}), std::invalid_argument);
  EXPECT_THROW(CsvWriter(path("a.csv"), {""}), std::invalid_argument);
  EXPECT_THROW(CsvWriter(path("a.csv"), {"x_1", "x_1"}), std::invalid_argument);
  EXPECT_THROW(CsvWriter(path("missing/dir/a.csv"), {"x_1"}), OutputError);
  CsvWriter w(path("b.csv"), {"x_1", "v_1"});
  const double one[1] = {1.0};
  EXPECT_THROW(w.write_row(0.0, one), std::invalid_argument);
  w.close();
  const double two[2] = {1.0, 2.0};
  EXPECT_THROW(w.write_row(0.0, two), OutputError);
}

std::string error_of(const std::string& file) {
  try {
    read_csv(file);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST_F(Csv, ReaderReportsFileLineAndProblem) {
  write_file("ragged.csv", "time,a,b\n0,1,2\n1,2\n");
  EXPECT_EQ(error_of(path("ragged.csv")),
            path("ragged.csv") + ":3: 2 fields, but the header has 3");
  write_file("text.csv", "time,a\n0,1\n1,abc\n");
  EXPECT_EQ(error_of(path("text.csv")), path("text.csv") + ":3: column 'a': 'abc' is not a number");
  write_file("partial.csv", "time,a\n0,1.5x\n");
  EXPECT_EQ(error_of(path("partial.csv")),
            path("partial.csv") + ":2: column 'a': '1.5x' is not a number");
  write_file("notime.csv", "t,a\n0,1\n");
  EXPECT_EQ(error_of(path("notime.csv")),
            path("notime.csv") + ":1: the first column must be 'time' (got 't')");
  write_file("dup.csv", "time,a,a\n");
  EXPECT_EQ(error_of(path("dup.csv")), path("dup.csv") + ":1: duplicate column 'a'");
  write_file("empty.csv", "");
  EXPECT_EQ(error_of(path("empty.csv")), path("empty.csv") + ":1: empty file: no header line");
  EXPECT_NE(error_of(path("none.csv")).find("cannot open"), std::string::npos);
}

TEST_F(Csv, ReaderAcceptsCrLfAndATrailingBlankLine) {
  write_file("crlf.csv", "time,a\r\n0,1\r\n0.5,2e-3\r\n\r\n");
  const CsvTable t = read_csv(path("crlf.csv"));
  EXPECT_EQ(t.time, (std::vector<double>{0.0, 0.5}));
  EXPECT_EQ(t.values[0], (std::vector<double>{1.0, 2e-3}));
}

using Metadata = TempDir;

TEST_F(Metadata, WriteJsonReplacesTheFileAtomically) {
  nlohmann::ordered_json doc = {{"b", 1}, {"a", {{"text", "line 1\nline 2"}}}};
  macrostep::output::write_json(path("m.json"), doc);
  macrostep::output::write_json(path("m.json"), doc);  // overwrite
  const auto back = nlohmann::ordered_json::parse(read_file("m.json"));
  EXPECT_EQ(back, doc);
  // Keys stay in insertion order, and no temporary file is left behind.
  EXPECT_LT(read_file("m.json").find("\"b\""), read_file("m.json").find("\"a\""));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1U);
  EXPECT_THROW(macrostep::output::write_json(path("missing/m.json"), doc), OutputError);
}

TEST(MetadataPath, SameStemWithJsonExtension) {
  EXPECT_EQ(macrostep::output::metadata_path("out/k-5.1.csv"), "out/k-5.1.json");
  EXPECT_EQ(macrostep::output::metadata_path("k-5.1.reference.csv"), "k-5.1.reference.json");
  EXPECT_EQ(macrostep::output::metadata_path("result"), "result.json");
}

TEST(BuildInfo, NamesTheVersions) {
  const auto info = macrostep::output::build_info();
  EXPECT_FALSE(info.at("macrostep").get<std::string>().empty());
  EXPECT_FALSE(info.at("compiler").get<std::string>().empty());
  EXPECT_FALSE(info.at("fmt").get<std::string>().empty());
}

}  // namespace
