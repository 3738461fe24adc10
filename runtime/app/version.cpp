// `macrostep --version` (version.hpp). Its own translation unit, outside the unity batches
// (runtime/app/CMakeLists.txt), so that a new commit recompiles this file only.
#include "version.hpp"

#include <fmt/format.h>
#include <sundials/sundials_config.h>
#include <CLI/Version.hpp>

#include "macrostep_git_commit.hpp"

namespace macrostep::app {

std::string version_text() {
  return fmt::format("macrostep {} (commit {})\nSUNDIALS {}, CLI11 {}", MACROSTEP_VERSION,
                     MACROSTEP_GIT_COMMIT, SUNDIALS_VERSION, CLI11_VERSION);
}

}  // namespace macrostep::app
