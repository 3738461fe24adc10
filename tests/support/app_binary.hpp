// The `macrostep` binary an end-to-end test starts.
//
// It is the binary of the test's own build (`built`, the target's MACROSTEP_BINARY), unless the
// environment variable MACROSTEP_TEST_APP names another. The build sets that variable only on the
// tests that compare the bytes of the binary's own runs (across executors, groupings, schemes, a
// resume or a recovery), and only when it is configured with MACROSTEP_COMPARISON_BINARY
// (tests/CMakeLists.txt; CI's sanitizer phase names the release build's binary there, tools/test).
// Those tests check contract 1 (DESIGN.md) on the binary users run, and the sanitized binary
// runs the same executors, recoveries and resumes in the other end-to-end tests.
#pragma once

#include <cstdlib>
#include <string>

namespace macrostep::testing {

inline std::string app_binary(const char* built) {
  const char* other = std::getenv("MACROSTEP_TEST_APP");
  return other != nullptr && *other != '\0' ? std::string(other) : std::string(built);
}

}  // namespace macrostep::testing
