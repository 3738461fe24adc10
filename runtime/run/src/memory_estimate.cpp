#include "memory_estimate.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "macrostep/run/monolithic.hpp"

namespace macrostep::run {

std::optional<std::uint64_t> available_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

void check_memory(const config::RunConfig& config, std::size_t copies) {
  if (config.system_description) return;
  const std::uint64_t masses = config.chain.masses;
  const std::uint64_t needed = masses * kBytesPerMass * copies;
  const auto available = available_memory();
  if (!available || needed <= *available) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw SetupError(fmt::format(
      "{}: model.masses = {} needs about {:.1f} GiB of memory ({} copies of the model at ~{:.1f} "
      "KiB per mass), but only {:.1f} GiB are available (MemAvailable); use fewer masses",
      config.path, masses, static_cast<double>(needed) / kGiB, copies,
      static_cast<double>(kBytesPerMass) / 1024.0, static_cast<double>(*available) / kGiB));
}

}  // namespace macrostep::run
