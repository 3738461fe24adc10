// Writing a whole buffer to a descriptor (private to macrostep_output).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace macrostep::output::detail {

// Writes all of `data` to `fd`, retrying short writes and EINTR; false with errno set if the
// system refuses part of it (ENOSPC, EFBIG, EIO, ...).
inline bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace macrostep::output::detail
