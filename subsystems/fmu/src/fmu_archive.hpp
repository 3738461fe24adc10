// An FMU is a zip archive (FMI 2 §2.4, FMI 3 §2.5): read_fmu_archive() reads every file entry
// into memory with libarchive, so that modelDescription.xml is parsed from memory and only the
// platform binary (and resources/, if any) are written to a private directory.
#pragma once

#include <map>
#include <string>

namespace macrostep::fmu {

// Entry path ("binaries/linux64/model.so") → contents, for every file entry; only the entries
// an importer can use are read (modelDescription.xml, binaries/linux64/ and
// binaries/x86_64-linux/, resources/), the others are listed with empty contents. Throws
// std::invalid_argument "not a zip archive (...)" for a file that libarchive cannot read as zip,
// naming libarchive's reason.
std::map<std::string, std::string> read_fmu_archive(const std::string& path);

}  // namespace macrostep::fmu
