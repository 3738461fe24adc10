// The corpus of broken configurations: every file in tests/config/bad/ must be rejected with
// the message announced in its first line,
//   # expect: FILE:<line>: <key path>: <problem>
// where FILE stands for the path given to load_config. The message must start with that text
// (the rest, e.g. the list of allowed keys, may follow) and be a single line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::config::ConfigError;

const fs::path kBadDir = fs::path(MACROSTEP_SOURCE_DIR) / "tests" / "config" / "bad";

std::vector<fs::path> bad_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kBadDir)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string expected_message(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  const std::string tag = "# expect: ";
  if (first.rfind(tag, 0) != 0) return {};
  std::string expect = first.substr(tag.size());
  const auto at = expect.find("FILE");
  if (at != std::string::npos) expect.replace(at, 4, file.string());
  return expect;
}

class BadConfig : public ::testing::TestWithParam<fs::path> {};

TEST_P(BadConfig, IsRejectedWithTheAnnouncedMessage) {
  const fs::path file = GetParam();
  const std::string expect = expected_message(file);
  ASSERT_FALSE(expect.empty()) << file << " lacks a '# expect: FILE:<line>: ...' first line";
  try {
    macrostep::config::load_config(file.string());
    FAIL() << file << " was accepted";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.substr(0, expect.size()), expect) << "full message: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    EXPECT_EQ(e.file(), file.string());
    // The line in the message is the one ConfigError carries.
    if (e.line() > 0) {
      EXPECT_NE(message.find(":" + std::to_string(e.line()) + ":"), std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadConfig, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           return info.param.stem().string();
                         });

TEST(BadConfigCorpus, CoversAtLeastEightyCases) {
  EXPECT_GE(bad_files().size(), 80U);
}

TEST(BadConfigCorpus, MissingFileIsAConfigError) {
  try {
    macrostep::config::load_config("no/such/file.toml");
    FAIL() << "accepted a missing file";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "no/such/file.toml: cannot open the configuration file: " +
                                         std::string(std::strerror(ENOENT)));
  }
}

}  // namespace
