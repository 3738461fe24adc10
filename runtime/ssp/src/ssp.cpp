// Opening an SSP (macrostep/ssp/ssp.hpp): the package unpacked with the FMU archive code, the
// files an SSD refers to, and the translation into configuration text.
#include "macrostep/ssp/ssp.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

#include "macrostep/fmu/archive.hpp"
#include "model.hpp"
#include "xml.hpp"

namespace macrostep::ssp {

namespace fs = std::filesystem;

SspError::SspError(Origin origin, const std::string& problem)
    : std::runtime_error(fmt::format("{}{}: {}{}", origin.file,
                                     origin.line > 0 ? fmt::format(":{}", origin.line) : "",
                                     origin.element.empty() ? "" : origin.element + ": ", problem)),
      origin_(std::move(origin)),
      problem_(problem) {}

namespace {

constexpr const char* kSsdMember = "SystemStructure.ssd";

bool has_extension(std::string_view path, std::string_view extension) {
  const std::string ext = fs::path(path).extension().string();
  return ext.size() == extension.size() &&
         std::equal(ext.begin(), ext.end(), extension.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

class Unpacked final : public UnpackedPackage {
 public:
  explicit Unpacked(fmu::UnpackDirectory dir) : dir_(std::move(dir)), root_(dir_.path().string()) {}
  const std::string& root() const override { return root_; }

 private:
  fmu::UnpackDirectory dir_;
  std::string root_;
};

std::shared_ptr<const UnpackedPackage> unpack_listed(const std::string& path,
                                                     std::vector<std::string>& members) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw SspError({path, 0, ""}, fmt::format("cannot open it: {}", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw SspError({path, 0, ""}, "is not a regular file");
  try {
    const fmu::ArchiveLimits limits = fmu::ArchiveLimits::from_environment();
    members = fmu::list_fmu_archive(path, limits).files;
    if (std::find(members.begin(), members.end(), kSsdMember) == members.end()) {
      throw SspError({path, 0, ""},
                     fmt::format("has no {} at its root: an SSP package is a zip archive with "
                                 "its system structure description there",
                                 kSsdMember));
    }
    return std::make_shared<const Unpacked>(fmu::unpack_fmu(path, kSsdMember, limits));
  } catch (const std::invalid_argument& e) {
    throw SspError({path, 0, ""}, e.what());
  }
}

// %XX decoded (RFC 3986); nothing for a malformed escape.
std::optional<std::string> percent_decoded(const std::string& uri) {
  std::string out;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      out += uri[i];
      continue;
    }
    if (i + 2 >= uri.size() || !std::isxdigit(static_cast<unsigned char>(uri[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(uri[i + 2]))) {
      return std::nullopt;
    }
    out += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return out;
}

bool has_scheme(const std::string& uri) {
  const auto colon = uri.find(':');
  if (colon == std::string::npos || colon == 0 ||
      std::isalpha(static_cast<unsigned char>(uri[0])) == 0) {
    return false;
  }
  return std::all_of(uri.begin(), uri.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
  });
}

}  // namespace

bool is_package(std::string_view path) {
  return has_extension(path, ".ssp");
}

bool is_description(std::string_view path) {
  return has_extension(path, ".ssd");
}

std::shared_ptr<const UnpackedPackage> unpack(const std::string& path) {
  std::vector<std::string> members;
  return unpack_listed(path, members);
}

namespace detail {

ResolvedFile resolve(const Files& files, const std::string& file, const xmlNode* n,
                     const std::string& uri, const char* what) {
  const auto decoded = percent_decoded(uri);
  if (!decoded || decoded->empty() || decoded->find('\0') != std::string::npos) {
    refuse(file, n, fmt::format("{} = \"{}\" is not a file reference", what, uri));
  }
  if (has_scheme(*decoded)) {
    refuse(file, n,
           fmt::format("{} = \"{}\": only relative references to files beside the SSD (in the "
                       "package) are supported, not URIs with a scheme",
                       what, uri));
  }
  const fs::path p = fs::path(*decoded).lexically_normal();
  ResolvedFile r;
  if (p.is_absolute()) {
    if (files.package) {
      refuse(
          file, n,
          fmt::format("{} = \"{}\" is an absolute path; a package's files are in it", what, uri));
    }
    r.relative = r.disk = r.label = p.string();
  } else {
    if (files.package && (p.empty() || *p.begin() == "..")) {
      refuse(file, n, fmt::format("{} = \"{}\" leaves the package", what, uri));
    }
    r.relative = p.generic_string();
    r.disk = (fs::path(files.disk_root) / p).string();
    r.label = files.package ? files.label_root + "/" + r.relative
                            : (fs::path(files.label_root) / p).string();
  }
  std::error_code ec;
  if (!fs::is_regular_file(r.disk, ec)) {
    const bool elsewhere = files.package && std::find(files.members.begin(), files.members.end(),
                                                      r.relative) != files.members.end();
    refuse(file, n,
           elsewhere ? fmt::format("{} = \"{}\" is in the package but not under resources/ "
                                   "(macrostep unpacks {} and resources/)",
                                   what, uri, kSsdMember)
                     : fmt::format("{} = \"{}\": no such file: {}", what, uri, r.label));
  }
  return r;
}

}  // namespace detail

Translation translate(const std::string& path) {
  Translation t;
  detail::Files files;
  std::string ssd_disk, ssd_label, source;
  if (is_package(path)) {
    t.package = unpack_listed(path, files.members);
    files.package = true;
    files.disk_root = t.package->root();
    files.label_root = path;
    ssd_disk = (fs::path(files.disk_root) / kSsdMember).string();
    ssd_label = path + "/" + kSsdMember;
    source = "the SSP package " + fs::path(path).filename().string();
  } else {
    const fs::path parent = fs::path(path).parent_path();
    files.label_root = parent.string();
    files.disk_root = parent.empty() ? std::string(".") : parent.string();
    ssd_disk = ssd_label = path;
    source = "the SSD " + fs::path(path).filename().string();
  }
  t.base_directory = files.disk_root;
  const detail::XmlDocument document(detail::read_xml_file(ssd_disk, ssd_label), ssd_label);
  const detail::SystemModel model = detail::read_ssd(document, files);
  t.has_experiment = model.end_time.has_value();
  detail::write_toml(model, source, t);
  return t;
}

}  // namespace macrostep::ssp
