#include "topology_cleanup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/ipc/shared_segment.hpp"
#include "macrostep/placement/placement.hpp"

namespace macrostep::app {

int topology_command(const std::string& config_path, const std::string& pin) {
  const placement::PinRequest request = placement::parse_pin(pin);  // before any work
  const placement::Topology topology = placement::Topology::detect();
  placement::check_usable(topology, request);  // a map's entry count: once the config is read
  fmt::print("{}", topology.describe());
  if (config_path.empty()) return 0;

  const config::RunConfig config = config::load_config(config_path);
  const std::size_t subsystems = std::max<std::size_t>(1, config::subsystem_count(config));
  const config::CosimConfig& c = config.cosim;
  const bool extra_run =
      c.estimator == control::Estimator::kExMD || c.estimator == control::Estimator::kExLE;
  // An interface Jacobian of perturbed runs: one per input; a chain subsystem has at most two.
  const bool perturbed = c.iterative() && c.scheme != config::CosimScheme::kWaveform &&
                         corrector::jacobian_traits(c.jacobian).perturbed_runs;
  const std::size_t k = perturbed ? std::min<std::size_t>(2, subsystems - 1) : extra_run ? 1 : 0;
  const placement::PlacementMap map =
      placement::plan_placement(topology, request, subsystems, 1 + k);
  fmt::print("\n{}: {} subsystem{}, {} scheme, estimator {} (k = {} extra run{} per subsystem)\n",
             config_path, subsystems, subsystems == 1 ? "" : "s", config::to_string(c.scheme),
             control::to_string(c.estimator), k, k == 1 ? "" : "s");
  fmt::print("{}", map.describe());
  return 0;
}

int cleanup_command() {
  const std::vector<ipc::StaleSegment> removed = ipc::remove_stale_segments();
  if (removed.empty()) {
    fmt::print("no stale segments\n");
    return 0;
  }
  for (const auto& s : removed) {
    std::string created = "unknown";
    if (s.creation_time_ns != 0) {
      const std::time_t t = static_cast<std::time_t>(s.creation_time_ns / 1'000'000'000);
      std::tm tm{};
      char buf[32];
      if (::gmtime_r(&t, &tm) != nullptr &&
          std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) > 0) {
        created = buf;
      }
    }
    fmt::print("removed {} (owner pid {}, {} bytes, created {}): {}\n", s.name, s.owner_pid, s.size,
               created, s.reason);
  }
  fmt::print("{} stale segment{} removed\n", removed.size(), removed.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace macrostep::app
