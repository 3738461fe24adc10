// SSP import: a System Structure and Parameterization 1.0 package (`.ssp`, a zip with
// SystemStructure.ssd at its root) or a plain System Structure Description (`.ssd`) read as the
// TOML configuration text that describes the same system with [[subsystem]] and [[connection]]
// tables (docs/reference/configuration.md, "SSP packages"). The configuration reader
// (runtime/config) parses that text like any file, so every check, --set edit, the metadata and
// checkpoints work for an SSP as for TOML.
//
// What is read: one ssd:System whose ssd:Elements are FMU components (Model Exchange), their
// connectors of kind input, output, parameter and calculatedParameter (a connection joins Real
// outputs and inputs; the others are left alone), parameter bindings (.ssv files or inline
// ssv:ParameterSet, with prefix) on the components and on the system, connections from a
// component's output to another component's input (drawn either way; optionally with
// ssc:LinearTransformation), unit definitions (ssd:Units, ssv:Units, the FMUs' UnitDefinitions)
// and ssd:DefaultExperiment. Units are converted where they have the same base units (parameter
// values into their variables' units, connections through the signal law's gain and offset) and
// refused where they have not; parameter values are checked against the FMUs' model descriptions
// and never rounded. Everything else that would change the system's meaning is refused with
// SspError naming file, line and element; geometry, annotations, enumeration definitions and meta
// data are ignored.
//
// Thread-safety: the functions share no state; each call works on its own files.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace macrostep::ssp {

// Where something of an SSP is: the file as messages name it ("sys.ssp/SystemStructure.ssd" for
// a member of a package, else the path as given), the 1-based line (0: none) and the element as
// written ("ssd:Component \"engine\"").
struct Origin {
  std::string file;
  unsigned line = 0;
  std::string element;
};

// A refusal of an SSP: unreadable or malformed files, unsupported elements, impossible
// references. what() is "<file>:<line>: <element>: <problem>" (line and element left out when
// there are none), the configuration reader's format.
class SspError : public std::runtime_error {
 public:
  SspError(Origin origin, const std::string& problem);
  const Origin& origin() const { return origin_; }
  const std::string& problem() const { return problem_; }

 private:
  Origin origin_;
  std::string problem_;
};

// Whether `path` names an SSP package (extension .ssp) or a System Structure Description
// (.ssd), by its extension (any letter case): the configuration reader's dispatch.
bool is_package(std::string_view path);
bool is_description(std::string_view path);

// The files of an unpacked package: SystemStructure.ssd and resources/ in a private directory
// under $TMPDIR, removed with everything in it when the last owner lets go (unpacked with the
// FMU archive limits, fmu/archive.hpp). `root()` is the package's root there.
class UnpackedPackage {
 public:
  virtual ~UnpackedPackage() = default;
  virtual const std::string& root() const = 0;
};

// Unpacks package `path`. Throws SspError (no line) for a file that is not a zip archive, a
// damaged one, a limit exceeded, or an archive without SystemStructure.ssd at its root.
std::shared_ptr<const UnpackedPackage> unpack(const std::string& path);

// An SSP as configuration text.
struct Translation {
  // The TOML configuration. FMU paths in it are relative to `base_directory`; it has no
  // [simulation] table when the SSD has no ssd:DefaultExperiment stopTime.
  std::string toml;
  // The package's unpacked root (for .ssp), or the directory of the .ssd.
  std::string base_directory;
  // The unpacked package that `base_directory` is in (null for .ssd): keep it while the
  // configuration's FMU files are used (the runs build the subsystems from them).
  std::shared_ptr<const UnpackedPackage> package;
  // origins[k]: the SSP element that TOML line k + 1 was written from (an empty file: none).
  std::vector<Origin> origins;
  // Whether the SSD gives the simulated time (ssd:DefaultExperiment stopTime).
  bool has_experiment = false;
};

// Reads package or description `path` (is_package / is_description) with the files it refers
// to. Throws SspError for anything refused (see above).
Translation translate(const std::string& path);

}  // namespace macrostep::ssp
