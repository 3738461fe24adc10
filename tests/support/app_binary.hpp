// The `macrostep` binary an end-to-end test starts.
//
// It is the binary of the test's own build (`built`, the target's MACROSTEP_BINARY), unless the
// environment variable MACROSTEP_TEST_APP names another. The build sets that variable only on the
// tests that check the numbers of the binary's own runs (their bytes across executors,
// groupings, schemes, a resume or a recovery; their agreement with a reference or a closed form),
// and only when it is configured with MACROSTEP_COMPARISON_BINARY (tests/CMakeLists.txt; CI's
// sanitizer phase names the release build's binary there, tools/test). Those tests check the
// binary users run, and the sanitized binary runs the same paths in the other end-to-end tests.
#pragma once

#include <cstdlib>
#include <string>

namespace macrostep::testing {

inline std::string app_binary(const char* built) {
  const char* other = std::getenv("MACROSTEP_TEST_APP");
  return other != nullptr && *other != '\0' ? std::string(other) : std::string(built);
}

}  // namespace macrostep::testing
