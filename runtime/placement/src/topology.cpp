// The hwloc-independent part of Topology: counts, the description and its JSON.
#include "macrostep/placement/placement.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

namespace macrostep::placement {

// ---------------------------------------------------------------------------------- Topology

Topology Topology::from_pus(std::vector<ProcessingUnit> pus) {
  if (pus.empty()) throw std::invalid_argument("a topology needs at least one PU");
  std::set<unsigned> seen;
  for (const auto& pu : pus) {
    if (!seen.insert(pu.os_index).second) {
      throw std::invalid_argument(fmt::format("PU {} appears twice in the topology", pu.os_index));
    }
  }
  Topology t;
  t.pus = std::move(pus);
  t.source = "synthetic";
  t.machine_pus = t.pus.size();
  return t;
}

std::size_t Topology::packages() const {
  std::set<unsigned> s;
  for (const auto& pu : pus) s.insert(pu.package);
  return s.size();
}

std::size_t Topology::cores() const {
  std::set<std::pair<unsigned, unsigned>> s;
  for (const auto& pu : pus) s.emplace(pu.package, pu.core);
  return s.size();
}

std::size_t Topology::numa_nodes() const {
  std::set<unsigned> s;
  for (const auto& pu : pus) s.insert(pu.numa);
  return s.size();
}

std::vector<unsigned> Topology::pu_os_indices() const {
  std::vector<unsigned> v;
  v.reserve(pus.size());
  for (const auto& pu : pus) v.push_back(pu.os_index);
  return v;
}

bool Topology::has_pu(unsigned os_index) const {
  return std::any_of(pus.begin(), pus.end(),
                     [&](const ProcessingUnit& pu) { return pu.os_index == os_index; });
}

namespace {

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  if (bytes >= (1ULL << 10) && bytes % (1ULL << 10) == 0) {
    return fmt::format("{} KiB", bytes >> 10);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace

std::string Topology::describe() const {
  std::string out = fmt::format("topology ({}): {} package{}, {} core{}, {} PU{} usable", source,
                                packages(), packages() == 1 ? "" : "s", cores(),
                                cores() == 1 ? "" : "s", pus.size(), pus.size() == 1 ? "" : "s");
  if (machine_pus != 0 && machine_pus != pus.size()) {
    out += fmt::format(" (of {} on the machine)", machine_pus);
  }
  out += fmt::format(", {} NUMA node{}\n", numa_nodes(), numa_nodes() == 1 ? "" : "s");
  out += fmt::format("  usable PUs (OS indices): {}\n", format_pu_list(pu_os_indices()));
  // package -> core -> PUs, in the order of `pus`.
  std::vector<unsigned> package_order;
  std::map<unsigned, std::vector<unsigned>> core_order;
  std::map<std::pair<unsigned, unsigned>, std::vector<unsigned>> core_pus;
  for (const auto& pu : pus) {
    if (std::find(package_order.begin(), package_order.end(), pu.package) == package_order.end()) {
      package_order.push_back(pu.package);
    }
    auto& cores_of = core_order[pu.package];
    if (std::find(cores_of.begin(), cores_of.end(), pu.core) == cores_of.end()) {
      cores_of.push_back(pu.core);
    }
    core_pus[{pu.package, pu.core}].push_back(pu.os_index);
  }
  for (unsigned p : package_order) {
    out += fmt::format("  package {}:", p);
    for (unsigned c : core_order[p]) {
      out += fmt::format(" core {} [PU {}]", c, format_pu_list(core_pus[{p, c}]));
    }
    out += '\n';
  }
  std::map<unsigned, std::vector<unsigned>> numa_pus;
  for (const auto& pu : pus) numa_pus[pu.numa].push_back(pu.os_index);
  for (const auto& [node, list] : numa_pus) {
    out += fmt::format("  NUMA node {}: PU {}\n", node, format_pu_list(list));
  }
  if (!caches.empty()) {
    out += "  caches:";
    for (std::size_t i = 0; i < caches.size(); ++i) {
      out += fmt::format("{} {} {} x {}", i == 0 ? "" : ",", caches[i].name,
                         format_bytes(caches[i].size_bytes), caches[i].instances);
    }
    out += '\n';
  }
  return out;
}

nlohmann::ordered_json Topology::to_json() const {
  nlohmann::ordered_json j;
  j["source"] = source;
  j["packages"] = packages();
  j["cores"] = cores();
  j["pus"] = pus.size();
  j["machine_pus"] = machine_pus;
  j["numa_nodes"] = numa_nodes();
  j["pu_os_indices"] = pu_os_indices();
  auto& cache_list = j["caches"] = nlohmann::ordered_json::array();
  for (const auto& c : caches) {
    cache_list.push_back(
        {{"name", c.name}, {"size_bytes", c.size_bytes}, {"instances", c.instances}});
  }
  return j;
}

// ------------------------------------------------------------------------------- parse_pin

}  // namespace macrostep::placement
