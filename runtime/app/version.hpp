// What `macrostep --version` prints: the project version, the commit the build was configured
// from, and the versions of the libraries whose behaviour a result depends on.
#pragma once

#include <string>

namespace macrostep::app {

// "macrostep 0.1.0 (commit 74f8610-dirty)\nSUNDIALS 6.4.1, CLI11 2.1.2": the commit is
// `git describe --always --dirty` at configure time, or "unknown" outside a git checkout
// (cmake/GitCommit.cmake). No trailing newline (CLI11 adds it).
std::string version_text();

}  // namespace macrostep::app
