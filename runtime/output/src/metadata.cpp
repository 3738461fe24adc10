#include "macrostep/output/metadata.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "macrostep/output/csv.hpp"

namespace macrostep::output {

void write_json(const std::string& path, const nlohmann::ordered_json& document) {
  // The process id keeps concurrent writers of different runs apart.
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputError(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
    out << document.dump(2) << '\n';
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw OutputError(fmt::format("{}: write failed", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw OutputError(fmt::format("{}: cannot rename into place: {}", path, std::strerror(err)));
  }
}

std::string metadata_path(const std::string& result_path) {
  return std::filesystem::path(result_path).replace_extension(".json").string();
}

nlohmann::ordered_json build_info() {
  return {
      {"macrostep", MACROSTEP_VERSION},
      {"compiler", __VERSION__},
      {"build_type", MACROSTEP_BUILD_TYPE},
      {"fmt",
       fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
      {"nlohmann_json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                    NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
  };
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace macrostep::output
