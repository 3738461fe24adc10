// libxml2 for the SSP readers (xml.hpp).
#include "xml.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <libxml/parser.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace macrostep::ssp::detail {

XmlDocument::XmlDocument(const std::string& text, std::string file)
    : doc_(nullptr, xmlFreeDoc), file_(std::move(file)) {
  if (text.size() > kMaxXmlBytes) {
    throw SspError({file_, 0, ""}, fmt::format("is larger than {} MiB", kMaxXmlBytes >> 20));
  }
  xmlResetLastError();
  doc_.reset(xmlReadMemory(
      text.data(), static_cast<int>(text.size()), file_.c_str(), nullptr,
      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES));
  if (!doc_ || xmlDocGetRootElement(doc_.get()) == nullptr) {
    const xmlError* e = xmlGetLastError();
    std::string why = e && e->message ? e->message : "no root element";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    const unsigned line = e != nullptr && e->line > 0 ? static_cast<unsigned>(e->line) : 0;
    throw SspError({file_, line, ""}, "is not well-formed XML: " + why);
  }
}

const xmlNode* XmlDocument::root() const {
  return xmlDocGetRootElement(doc_.get());
}

std::string read_xml_file(const std::string& path, const std::string& file) {
  const auto fail = [&file](const char* what) {
    return SspError({file, 0, ""}, fmt::format("{}: {}", what, std::strerror(errno)));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail("cannot open it");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("cannot read it");
  if (!S_ISREG(st.st_mode)) throw SspError({file, 0, ""}, "is not a regular file");
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot read it");
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxXmlBytes) {
      throw SspError({file, 0, ""}, fmt::format("is larger than {} MiB", kMaxXmlBytes >> 20));
    }
  }
}

bool named(const xmlNode* n, const char* local) {
  return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, BAD_CAST local) == 0;
}

bool is(const xmlNode* n, const char* ns, const char* local) {
  return named(n, local) && n->ns != nullptr && n->ns->href != nullptr &&
         xmlStrcmp(n->ns->href, BAD_CAST ns) == 0;
}

std::vector<const xmlNode*> elements(const xmlNode* n) {
  std::vector<const xmlNode*> out;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE) out.push_back(c);
  }
  return out;
}

std::optional<std::string> attribute(const xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, BAD_CAST name);
  if (v == nullptr) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(v));
  xmlFree(v);
  return s;
}

std::string describe(const xmlNode* n) {
  std::string name = reinterpret_cast<const char*>(n->name);
  if (n->ns != nullptr && n->ns->prefix != nullptr) {
    name = reinterpret_cast<const char*>(n->ns->prefix) + (":" + name);
  }
  if (const auto id = attribute(n, "name")) {
    std::string shown = *id;
    if (shown.size() > 60) shown = shown.substr(0, 60) + "...";
    std::replace_if(
        shown.begin(), shown.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    name += " \"" + shown + "\"";
  }
  return name;
}

Origin origin_of(const std::string& file, const xmlNode* n) {
  const long line = xmlGetLineNo(n);
  return {file, line > 0 ? static_cast<unsigned>(line) : 0u, describe(n)};
}

void refuse(const std::string& file, const xmlNode* n, const std::string& problem) {
  throw SspError(origin_of(file, n), problem);
}

std::string required(const std::string& file, const xmlNode* n, const char* name) {
  auto v = attribute(n, name);
  if (!v || v->empty()) refuse(file, n, fmt::format("needs the attribute {}", name));
  return *v;
}

bool ignored(const xmlNode* n) {
  static constexpr std::string_view kIgnored[] = {
      "Annotations",        "ElementGeometry", "ConnectorGeometry",
      "ConnectionGeometry", "SystemGeometry",  "GraphicalElements",
      "MetaData",           "Signature",       "Enumerations"};
  const std::string_view name = reinterpret_cast<const char*>(n->name);
  return std::find(std::begin(kIgnored), std::end(kIgnored), name) != std::end(kIgnored);
}

}  // namespace macrostep::ssp::detail
