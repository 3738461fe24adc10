// docs/reference/models.md is `macrostep models`: the documentation of the models' parameters is
// generated from their parameter descriptions, so it cannot drift from what the reader accepts.
#include <gtest/gtest.h>

#include <fstream>
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

}  // namespace
