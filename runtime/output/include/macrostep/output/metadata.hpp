// JSON metadata beside every result file (DESIGN.md "Results"): the caller assembles the
// document (configuration, model summary, solver options, statistics, times); this module
// writes it safely and supplies the pieces every run shares.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "macrostep/output/destinations.hpp"

namespace macrostep::output {

// Writes `document` (indented) to `path` through a temporary file in the same directory that
// is renamed into place, so a reader never sees a half-written file. Throws OutputError.
// Messages name `path` and the system's reason; on failure the temporary file is removed.
void write_json(const std::string& path, const nlohmann::ordered_json& document);

// Checks before a run that a file can be written at `path` (the result CSV, or its metadata
// for write_json): `path` is not a directory and a file can be created beside it (tried and
// removed). Throws OutputError naming path, `what` the file is ("the result", "the run's
// metadata") and the reason.
void check_destination(const std::string& path, const std::string& what);

// The metadata file of a result file: same directory and stem, extension ".json"
// ("out/k-5.1.csv" -> "out/k-5.1.json").
std::string metadata_path(const std::string& result_path);

// The role of a run's metadata among its files (Destination::role, the metadata's "files").
inline constexpr const char* kMetadataRole = "the run's metadata";

// What an existing metadata document records of the run that wrote it: what a new run would
// replace (a rerun replaces its own result; nothing else is replaced unasked).
struct RecordedRun {
  bool exists = false;     // a file is at the path
  bool macrostep = false;  // it is a macrostep metadata document: an object with "mode", "files"
  std::string mode;        // "cosimulation", "monolithic", "reference"
  // Its "files", every file that run could write. A relative path was relative to that run's
  // working directory; here it is moved to where the document itself is now (it lists itself as
  // kMetadataRole), so that a rerun from another directory finds the same files.
  std::vector<Destination> files;
  // The path listed for `role`, empty if none.
  std::string path_of(const std::string& role) const;
};

// Reads the metadata document `json_path`. Never throws: a file that is not JSON, or JSON
// without "mode" and "files" (another program's, or a macrostep version's before "files"), has
// macrostep = false.
RecordedRun recorded_run(const std::string& json_path);

// The "columns" of a result's metadata: one object {"name": ..., "unit": ..., "description": ...}
// per column of the result table in its order, the key column first ("time", unit "s");
// `units` and `descriptions` have one entry per entry of `columns` ("" where not known; missing
// entries are "").
nlohmann::ordered_json columns_json(const std::vector<std::string>& columns,
                                    const std::vector<std::string>& units,
                                    const std::vector<std::string>& descriptions = {});

// The `field` ("unit", "description") that the metadata beside `result_path` records for each
// of `columns` (its "columns" as columns_json writes them, matched by name): one per column, ""
// where it records none. Empty if there is no such metadata or it records none at all (a result
// of an older version, a file of another program's). Never throws for a missing or malformed
// file.
std::vector<std::string> recorded_labels(const std::string& result_path,
                                         const std::vector<std::string>& columns,
                                         const std::string& field);

// Versions of macrostep, the compiler and the libraries this module was built with.
nlohmann::ordered_json build_info();

// Current UTC time as ISO 8601 ("2024-05-01T12:00:00Z").
std::string utc_timestamp();

}  // namespace macrostep::output
