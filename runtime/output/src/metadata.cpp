#include "macrostep/output/metadata.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "write_all.hpp"

namespace macrostep::output {

void write_json(const std::string& path, const nlohmann::ordered_json& document) {
  // The process id keeps concurrent writers of different runs apart.
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const std::string text = document.dump(2) + '\n';
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw OutputError(fmt::format("{}: cannot create its temporary file {}: {}", path, tmp,
                                  std::strerror(errno)));
  }
  bool written = detail::write_all(fd, text);
  int err = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    err = errno;
  }
  if (!written) {
    ::unlink(tmp.c_str());
    throw OutputError(
        fmt::format("{}: write failed: {} (nothing written; the previous file, if "
                    "any, is unchanged)",
                    path, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw OutputError(fmt::format("{}: cannot rename into place: {}", path, std::strerror(err)));
  }
}

void check_destination(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw OutputError(fmt::format("{}: is a directory; {} goes there", path, what));
  }
  const std::string probe = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw OutputError(
        fmt::format("{}: cannot create {} there: {}", path, what, std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string metadata_path(const std::string& result_path) {
  return std::filesystem::path(result_path).replace_extension(".json").string();
}

namespace {

// `recorded`, a path as the run that wrote the metadata was given it, where it is now: relative
// to the metadata's recorded path `self` and moved with it to `here`. As given where that cannot
// be told (an absolute `self`: the old working directory is unknown).
std::string anchored(const std::filesystem::path& recorded, const std::filesystem::path& self,
                     const std::string& here) {
  if (recorded.is_absolute() || self.empty() || self.is_absolute()) return recorded.string();
  const std::filesystem::path relative = recorded.lexically_relative(self.parent_path());
  if (relative.empty()) return recorded.string();
  std::error_code ignored;
  return (std::filesystem::absolute(here, ignored).parent_path() / relative)
      .lexically_normal()
      .string();
}

}  // namespace

std::string RecordedRun::path_of(const std::string& role) const {
  for (const Destination& d : files) {
    if (d.role == role) return d.path;
  }
  return {};
}

RecordedRun recorded_run(const std::string& json_path) {
  RecordedRun run;
  std::error_code ignored;
  run.exists = std::filesystem::exists(json_path, ignored);
  if (!std::filesystem::is_regular_file(json_path, ignored)) return run;  // e.g. a directory
  std::ifstream in(json_path);
  if (!in) return run;
  const auto meta = nlohmann::json::parse(in, nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("mode") ||
      !meta["mode"].is_string() || !meta.contains("files") || !meta["files"].is_array()) {
    return run;
  }
  for (const auto& f : meta["files"]) {
    if (!f.is_object() || !f.contains("role") || !f["role"].is_string() || !f.contains("path") ||
        !f["path"].is_string()) {
      return run;
    }
    run.files.push_back({f["role"].get<std::string>(), f["path"].get<std::string>(),
                         f.contains("directory") && f["directory"] == true});
  }
  run.macrostep = true;
  run.mode = meta["mode"].get<std::string>();
  const std::string self = run.path_of(kMetadataRole);
  for (Destination& d : run.files) d.path = anchored(d.path, self, json_path);
  return run;
}

nlohmann::ordered_json columns_json(const std::vector<std::string>& columns,
                                    const std::vector<std::string>& units,
                                    const std::vector<std::string>& descriptions) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  out.push_back({{"name", "time"}, {"unit", "s"}, {"description", "time"}});
  for (std::size_t j = 0; j < columns.size(); ++j) {
    out.push_back({{"name", columns[j]},
                   {"unit", j < units.size() ? units[j] : ""},
                   {"description", j < descriptions.size() ? descriptions[j] : ""}});
  }
  return out;
}

std::vector<std::string> recorded_labels(const std::string& result_path,
                                         const std::vector<std::string>& columns,
                                         const std::string& field) {
  std::ifstream in(metadata_path(result_path));
  if (!in) return {};
  const auto meta = nlohmann::json::parse(in, nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("columns") ||
      !meta["columns"].is_array()) {
    return {};
  }
  std::unordered_map<std::string, std::string> label_of;
  for (const auto& c : meta["columns"]) {
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains(field) ||
        !c[field].is_string()) {
      continue;
    }
    label_of[c["name"].get<std::string>()] = c[field].get<std::string>();
  }
  std::vector<std::string> labels;
  bool any = false;
  for (const auto& name : columns) {
    const auto it = label_of.find(name);
    labels.push_back(it == label_of.end() ? "" : it->second);
    any = any || !labels.back().empty();
  }
  if (!any) labels.clear();
  return labels;
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
