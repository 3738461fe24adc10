// The reference documentation against the binary: docs/reference/models.md is `macrostep
// models` (generated from the models' parameter descriptions, so it cannot drift from what the
// reader accepts), and docs/reference/commands.md names every subcommand and every flag that
// the command line accepts, and no flag that it does not.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::Outcome;

class ModelsReference : public macrostep::testing::BinaryTest {};

TEST_F(ModelsReference, TheDocumentationIsTheCommandsOutput) {
  const Outcome o = macrostep("models");
  ASSERT_EQ(o.status, 0) << o.err;
  std::ifstream in(std::string(MACROSTEP_SOURCE_DIR) + "/docs/reference/models.md");
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_TRUE(o.out == file.str())
      << "docs/reference/models.md is out of date: build/release/runtime/app/macrostep models > "
         "docs/reference/models.md";
  for (const char* model : {"## `pid`", "## `belt_drive`", "## `dc_motor`", "## `step`"}) {
    EXPECT_NE(o.out.find(model), std::string::npos) << model;
  }
}

// Every "--flag" word in `text`.
std::set<std::string> flags_in(const std::string& text) {
  static const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  std::set<std::string> flags;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator();
       ++it) {
    flags.insert(it->str());
  }
  return flags;
}

class CommandsReference : public macrostep::testing::BinaryTest {};

TEST_F(CommandsReference, NamesEverySubcommandAndFlagTheParserAccepts) {
  std::ifstream in(std::string(MACROSTEP_SOURCE_DIR) + "/docs/reference/commands.md");
  std::stringstream file;
  file << in.rdbuf();
  const std::string doc = file.str();
  const Outcome top = macrostep("--help");
  ASSERT_EQ(top.status, 0) << top.err;
  const auto list = top.out.find("Subcommands:");
  ASSERT_NE(list, std::string::npos) << top.out;
  std::set<std::string> accepted = flags_in(top.out.substr(0, list));
  static const std::regex entry(R"(\n  ([a-z][a-z-]*) )");
  const std::string names = top.out.substr(list);
  int subcommands = 0;
  for (auto it = std::sregex_iterator(names.begin(), names.end(), entry);
       it != std::sregex_iterator(); ++it, ++subcommands) {
    const std::string name = (*it)[1].str();
    EXPECT_NE(doc.find("macrostep " + name), std::string::npos) << name << " is not documented";
    const Outcome help = macrostep(name + " --help");
    ASSERT_EQ(help.status, 0) << name << ": " << help.err;
    for (const std::string& flag : flags_in(help.out)) {
      accepted.insert(flag);
      if (flag == "--help") continue;
      EXPECT_NE(doc.find(flag), std::string::npos)
          << "macrostep " << name << " " << flag << " is not in docs/reference/commands.md";
    }
  }
  EXPECT_GE(subcommands, 11);
  // Flags of other programs that the reference quotes (git describe, cmake).
  const std::set<std::string> others = {"--always", "--dirty", "--build", "--preset", "--target"};
  for (const std::string& flag : flags_in(doc)) {
    EXPECT_TRUE(accepted.count(flag) > 0 || others.count(flag) > 0)
        << "docs/reference/commands.md names " << flag << ", which no subcommand accepts";
  }
}

}  // namespace
