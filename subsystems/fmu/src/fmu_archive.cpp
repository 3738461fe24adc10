// read_fmu_archive (fmu_archive.hpp).
#include "fmu_archive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <stdexcept>

namespace macrostep::fmu {

std::map<std::string, std::string> read_fmu_archive(const std::string& path) {
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), &archive_read_free);
  if (!a) throw std::bad_alloc();
  archive_read_support_format_zip(a.get());
  const auto fail = [&](const char* what) {
    const char* why = archive_error_string(a.get());
    throw std::invalid_argument(std::string(what) + " (" + (why ? why : "unknown reason") + ")");
  };
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) {
    fail("not a zip archive");
  }
  std::map<std::string, std::string> entries;
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) fail("not a zip archive");
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    std::string name = archive_entry_pathname(entry);
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    std::string data;
    const auto under = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
    if (name != "modelDescription.xml" && !under("binaries/linux64/") &&
        !under("binaries/x86_64-linux/") && !under("resources/")) {
      entries.emplace(std::move(name), std::move(data));  // listed, not read
      continue;
    }
    char buffer[1 << 16];
    for (la_ssize_t n; (n = archive_read_data(a.get(), buffer, sizeof buffer)) != 0;) {
      if (n < 0) fail(("a damaged zip archive: cannot read " + name).c_str());
      data.append(buffer, static_cast<std::size_t>(n));
    }
    entries.emplace(std::move(name), std::move(data));
  }
  return entries;
}

}  // namespace macrostep::fmu
