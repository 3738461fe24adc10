// libxml2 for the SSP readers (private to macrostep_ssp): a parsed document, the SSP 1.0
// namespaces, and element access that refuses with the file, line and element.
#pragma once

#include <libxml/tree.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/ssp/ssp.hpp"

namespace macrostep::ssp::detail {

inline constexpr const char* kSsdNamespace =
    "http://ssp-standard.org/SSP1/SystemStructureDescription";
inline constexpr const char* kSscNamespace = "http://ssp-standard.org/SSP1/SystemStructureCommon";
inline constexpr const char* kSsvNamespace =
    "http://ssp-standard.org/SSP1/SystemStructureParameterValues";

// An SSD or SSV file is parsed in memory; larger ones are refused unread.
inline constexpr std::size_t kMaxXmlBytes = std::size_t{128} << 20;

// A parsed XML file. The tree lives as long as the object; nodes handed out point into it.
class XmlDocument {
 public:
  // Parses `text` (without network access, external entities or DTD loading); `file` names it in
  // messages. Throws SspError "is not well-formed XML: <libxml2's reason>" at the problem's line.
  XmlDocument(const std::string& text, std::string file);
  const xmlNode* root() const;
  const std::string& file() const { return file_; }

 private:
  std::unique_ptr<xmlDoc, void (*)(xmlDoc*)> doc_;
  std::string file_;
};

// The bytes of file `path` (`file` names it in messages), at most kMaxXmlBytes; SspError with
// the system's reason if it cannot be read.
std::string read_xml_file(const std::string& path, const std::string& file);

// Whether `n` is element `local` of namespace `ns`.
bool is(const xmlNode* n, const char* ns, const char* local);
// Whether `n`'s local name is `local` (any namespace).
bool named(const xmlNode* n, const char* local);
// The element children of `n` in document order.
std::vector<const xmlNode*> elements(const xmlNode* n);
std::optional<std::string> attribute(const xmlNode* n, const char* name);

// The element as written, with its name attribute if it has one: `ssd:Component "engine"`.
std::string describe(const xmlNode* n);
Origin origin_of(const std::string& file, const xmlNode* n);

// SspError at element `n` of `file`.
[[noreturn]] void refuse(const std::string& file, const xmlNode* n, const std::string& problem);
// A required attribute; refused when it is missing or empty.
std::string required(const std::string& file, const xmlNode* n, const char* name);

// Geometry, annotations, meta data, signatures, enumeration definitions: elements that do not
// change the system a run computes (ssd, ssc and ssv alike). Unit definitions do (units.hpp).
bool ignored(const xmlNode* n);

}  // namespace macrostep::ssp::detail
