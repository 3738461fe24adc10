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

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

unsigned parse_index(std::string_view item, std::string_view part, std::string_view whole) {
  unsigned value = 0;
  const auto* first = part.data();
  const auto* last = part.data() + part.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (part.empty() || ec != std::errc() || ptr != last) {
    throw std::invalid_argument(fmt::format(
        "--pin '{}': '{}' in item '{}' is not a PU number (allowed: none, compact, scatter, or "
        "a list of OS PU indices and ranges such as 0,2,4-7)",
        whole, part, item));
  }
  if (value >= static_cast<unsigned>(CPU_SETSIZE)) {
    throw std::invalid_argument(fmt::format("--pin '{}': PU {} is out of range (at most {})", whole,
                                            value, CPU_SETSIZE - 1));
  }
  return value;
}

std::string process_name(std::size_t subsystem) {
  return fmt::format("subsystem {}", subsystem + 1);
}

}  // namespace

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

std::string PinRequest::to_string() const {
  switch (policy) {
    case PinPolicy::kNone:
      return "none";
    case PinPolicy::kCompact:
      return "compact";
    case PinPolicy::kScatter:
      return "scatter";
    case PinPolicy::kList:
      return format_pu_list(list);
  }
  return "?";
}

PinRequest parse_pin(std::string_view text) {
  const std::string_view whole = trim(text);
  if (whole == "none") return {PinPolicy::kNone, {}};
  if (whole == "compact") return {PinPolicy::kCompact, {}};
  if (whole == "scatter") return {PinPolicy::kScatter, {}};
  if (whole.empty()) {
    throw std::invalid_argument(
        "--pin is empty (allowed: none, compact, scatter, or a list of OS PU indices and ranges "
        "such as 0,2,4-7)");
  }
  const bool looks_like_list = std::all_of(whole.begin(), whole.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == ',' || c == '-' || c == ' ' || c == '\t';
  });
  if (!looks_like_list) {
    throw std::invalid_argument(
        fmt::format("--pin '{}' is not a policy (allowed: none, compact, scatter, or a list of OS "
                    "PU indices and ranges such as 0,2,4-7)",
                    whole));
  }
  PinRequest request{PinPolicy::kList, {}};
  std::set<unsigned> seen;
  std::string_view rest = whole;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      throw std::invalid_argument(
          fmt::format("--pin '{}': empty item in the PU list (write e.g. 0,2,4-7)", whole));
    }
    unsigned first = 0, last = 0;
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      first = last = parse_index(item, item, whole);
    } else {
      first = parse_index(item, trim(item.substr(0, dash)), whole);
      last = parse_index(item, trim(item.substr(dash + 1)), whole);
      if (last < first) {
        throw std::invalid_argument(fmt::format("--pin '{}': range '{}' is reversed (write {}-{})",
                                                whole, item, last, first));
      }
    }
    for (unsigned pu = first; pu <= last; ++pu) {
      if (!seen.insert(pu).second) {
        throw std::invalid_argument(
            fmt::format("--pin '{}': PU {} is listed twice (at '{}')", whole, pu, item));
      }
      request.list.push_back(pu);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return request;
}

std::string format_pu_list(const std::vector<unsigned>& pus) {
  std::string out;
  std::size_t i = 0;
  while (i < pus.size()) {
    std::size_t j = i;
    while (j + 1 < pus.size() && pus[j + 1] == pus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) {
      out += fmt::format("{}-{}", pus[i], pus[j]);
    } else {
      for (std::size_t m = i; m <= j; ++m) {
        if (m > i) out += ',';
        out += fmt::format("{}", pus[m]);
      }
    }
    i = j + 1;
  }
  return out;
}

// -------------------------------------------------------------------------- plan_placement

namespace {

// Scatter order: round-robin over packages, within a package over its cores, then the next PU
// of every core.
std::vector<unsigned> scatter_order(const Topology& topology) {
  std::vector<unsigned> package_order;
  std::map<unsigned, std::vector<unsigned>> core_order;
  std::map<std::pair<unsigned, unsigned>, std::vector<unsigned>> core_pus;
  for (const auto& pu : topology.pus) {
    if (std::find(package_order.begin(), package_order.end(), pu.package) == package_order.end()) {
      package_order.push_back(pu.package);
    }
    auto& cores_of = core_order[pu.package];
    if (std::find(cores_of.begin(), cores_of.end(), pu.core) == cores_of.end()) {
      cores_of.push_back(pu.core);
    }
    core_pus[{pu.package, pu.core}].push_back(pu.os_index);
  }
  std::size_t max_cores = 0, max_pus = 0;
  for (const auto& [p, cores] : core_order) max_cores = std::max(max_cores, cores.size());
  for (const auto& [c, list] : core_pus) max_pus = std::max(max_pus, list.size());
  std::vector<unsigned> order;
  order.reserve(topology.pus.size());
  for (std::size_t r = 0; r < max_pus; ++r) {
    for (std::size_t c = 0; c < max_cores; ++c) {
      for (unsigned p : package_order) {
        const auto& cores = core_order[p];
        if (c >= cores.size()) continue;
        const auto& list = core_pus[{p, cores[c]}];
        if (r < list.size()) order.push_back(list[r]);
      }
    }
  }
  return order;
}

// The rank of every PU within its core (0 for the first PU of a core in the topology's order,
// 1 for the second, ...), by OS index.
std::map<unsigned, std::size_t> thread_ranks(const Topology& topology) {
  std::map<std::pair<unsigned, unsigned>, std::size_t> seen;
  std::map<unsigned, std::size_t> rank;
  for (const auto& pu : topology.pus) rank[pu.os_index] = seen[{pu.package, pu.core}]++;
  return rank;
}

// Weights of the load count of a PU in the scarce plan. A subsystem run integrates all the time
// the step lasts; the master waits on a futex meanwhile, so it counts as half a run: a primary
// goes to the master's PU only once every other PU has one, and extra runs prefer the master's
// PU to a PU that already integrates.
constexpr unsigned kRunLoad = 2;
constexpr unsigned kMasterLoad = 1;

std::string subsystem_numbers(const std::vector<std::size_t>& subs) {
  std::vector<std::size_t> one_based;
  one_based.reserve(subs.size());
  for (std::size_t i : subs) one_based.push_back(i + 1);
  return fmt::format("subsystem{} {}", subs.size() == 1 ? "" : "s", fmt::join(one_based, ","));
}

// The scarce plan (fewer PUs in `order` than 1 + subsystems * pus_per_subsystem); the rule is
// the comment of plan_placement in the header. `spread` is `order` rearranged so that the first
// PU of every core comes before any second PU (the order in which primaries are tried).
// Returns the sharing part of the reason.
std::string plan_scarce(const Topology& topology, const std::vector<unsigned>& order,
                        const std::vector<unsigned>& spread, PlacementMap& map) {
  const std::size_t n = map.subsystems.size();
  const std::size_t p_count = order.size();
  std::map<unsigned, std::size_t> position;  // OS index -> position in `order`
  for (std::size_t i = 0; i < p_count; ++i) position[order[i]] = i;
  std::map<unsigned, const ProcessingUnit*> info;
  for (const auto& pu : topology.pus) info[pu.os_index] = &pu;
  std::vector<unsigned> load(p_count, 0);  // by position in `order`

  map.master = {order[0]};
  load[0] += kMasterLoad;

  // Primaries: the least loaded PU, ties broken by the spread order, so that they cover distinct
  // PUs (first PUs of distinct cores first) and then share round-robin, evenly.
  for (std::size_t s = 0; s < n; ++s) {
    std::size_t best = p_count;
    for (unsigned pu : spread) {
      const std::size_t i = position[pu];
      if (best == p_count || load[i] < load[best]) best = i;
    }
    map.subsystems[s] = {order[best]};
    load[best] += kRunLoad;
  }

  // Extras, one round per extra run over all subsystems, so that they also spread evenly: the
  // least loaded PU not yet in the subsystem's list; ties: the primary's core, then its package,
  // then the policy order.
  for (std::size_t r = 1; r < map.pus_per_subsystem; ++r) {
    for (auto& list : map.subsystems) {
      const ProcessingUnit* primary = info[list.front()];
      const auto key = [&](std::size_t i) {
        const ProcessingUnit* pu = info[order[i]];
        const bool same_package = pu->package == primary->package;
        const bool same_core = same_package && pu->core == primary->core;
        return std::make_tuple(load[i], !same_core, !same_package, i);
      };
      std::size_t best = p_count;
      for (std::size_t i = 0; i < p_count; ++i) {
        if (std::find(list.begin(), list.end(), order[i]) != list.end()) continue;
        if (best == p_count || key(i) < key(best)) best = i;
      }
      if (best == p_count) continue;  // every PU is in the list already
      list.push_back(order[best]);
      load[best] += kRunLoad;
    }
  }

  // What is shared, in the policy order of the PUs.
  std::vector<std::vector<std::size_t>> primaries(p_count), extras(p_count);
  for (std::size_t s = 0; s < n; ++s) {
    primaries[position[map.subsystems[s].front()]].push_back(s);
    for (std::size_t j = 1; j < map.subsystems[s].size(); ++j) {
      extras[position[map.subsystems[s][j]]].push_back(s);
    }
  }
  std::size_t most_primaries = 0;
  for (const auto& list : primaries) most_primaries = std::max(most_primaries, list.size());
  std::string out =
      most_primaries <= 1
          ? "every subsystem has a primary PU of its own"
          : fmt::format("primary PUs are shared by up to {} subsystems", most_primaries);
  out += primaries[0].empty() ? fmt::format(", the master has PU {} without a primary", order[0])
                              : fmt::format(
                                    ", the master shares PU {} (it mostly sleeps while subsystems "
                                    "integrate)",
                                    order[0]);
  std::vector<std::string> shared;
  for (std::size_t i = 0; i < p_count; ++i) {
    const std::size_t users = (i == 0 ? 1 : 0) + primaries[i].size() + extras[i].size();
    if (users < 2) continue;
    std::vector<std::string> who;
    if (i == 0) who.emplace_back("master");
    if (!primaries[i].empty()) who.push_back("primary of " + subsystem_numbers(primaries[i]));
    if (!extras[i].empty()) who.push_back("extra of " + subsystem_numbers(extras[i]));
    shared.push_back(fmt::format("PU {}: {}", order[i], fmt::join(who, ", ")));
  }
  out += fmt::format("; shared PUs: {}", fmt::join(shared, "; "));
  return out;
}

}  // namespace

PlacementMap plan_placement(const Topology& topology, const PinRequest& request,
                            std::size_t subsystems, std::size_t pus_per_subsystem) {
  if (pus_per_subsystem == 0) {
    throw std::invalid_argument("plan_placement: every subsystem process needs at least one PU");
  }
  PlacementMap map;
  map.policy = request.policy;
  map.policy_text = request.to_string();
  map.pus_per_subsystem = pus_per_subsystem;
  map.required_pus = 1 + subsystems * pus_per_subsystem;
  map.subsystems.resize(subsystems);

  std::vector<unsigned> order;
  switch (request.policy) {
    case PinPolicy::kNone:
    case PinPolicy::kCompact:
      order = topology.pu_os_indices();
      break;
    case PinPolicy::kScatter:
      order = scatter_order(topology);
      break;
    case PinPolicy::kList:
      if (request.list.empty()) throw std::invalid_argument("--pin: the PU list is empty");
      for (unsigned pu : request.list) {
        if (!topology.has_pu(pu)) {
          throw std::invalid_argument(
              fmt::format("--pin {}: PU {} is not usable by this process (usable PUs: {})",
                          map.policy_text, pu, format_pu_list(topology.pu_os_indices())));
        }
      }
      order = request.list;
      break;
  }
  map.available_pus = order.size();
  map.oversubscribed = map.required_pus > map.available_pus;
  const std::string shortage =
      fmt::format("{} processes need {} PUs (master 1 + {} subsystem{} x {}), but only {} {}",
                  1 + subsystems, map.required_pus, subsystems, subsystems == 1 ? "" : "s",
                  pus_per_subsystem, map.available_pus,
                  fmt::format("{} {}", map.available_pus == 1 ? "is" : "are",
                              request.policy == PinPolicy::kList ? "listed in --pin" : "usable"));
  if (request.policy == PinPolicy::kNone) {
    if (map.oversubscribed) map.reason = shortage + "; the OS shares them";
    return map;
  }
  if (map.oversubscribed) {
    // Compact: the first PU of every core before the second ones (a stable sort by thread rank);
    // scatter already has that order; a list keeps the order it was given.
    std::vector<unsigned> spread = order;
    if (request.policy == PinPolicy::kCompact) {
      const auto rank = thread_ranks(topology);
      std::stable_sort(spread.begin(), spread.end(),
                       [&](unsigned a, unsigned b) { return rank.at(a) < rank.at(b); });
    }
    map.reason = shortage + "; " + plan_scarce(topology, order, spread, map);
    return map;
  }

  // Enough PUs: handed out in sequence, every process has PUs of its own.
  std::size_t next = 0;
  map.master = {order[next++]};
  for (auto& list : map.subsystems) {
    for (std::size_t i = 0; i < pus_per_subsystem; ++i) list.push_back(order[next++]);
  }
  return map;
}

std::string PlacementMap::describe() const {
  const std::size_t n = subsystems.size();
  std::string out = fmt::format(
      "placement --pin {}: master + {} subsystem{} x {} PU{} = {} PU{} needed, {} usable{}\n",
      policy_text, n, n == 1 ? "" : "s", pus_per_subsystem, pus_per_subsystem == 1 ? "" : "s",
      required_pus, required_pus == 1 ? "" : "s", available_pus,
      oversubscribed ? " (oversubscribed)" : "");
  if (oversubscribed) out += fmt::format("  oversubscribed: {}\n", reason);
  if (policy == PinPolicy::kNone) {
    out += "  not pinned: the OS places the master and every subsystem process\n";
    return out;
  }
  const std::size_t width = std::max<std::size_t>(9, process_name(n == 0 ? 0 : n - 1).size());
  out += fmt::format("  {:<{}}  PUs\n", "process", width);
  out += fmt::format("  {:<{}}  {}\n", "master", width, format_pu_list(master));
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format("  {:<{}}  {}\n", process_name(i), width, format_pu_list(subsystems[i]));
  }
  // Per PU: who runs there (only interesting when PUs are shared, but always printed).
  std::map<unsigned, std::vector<std::string>> users;
  for (unsigned pu : master) users[pu].push_back("master");
  for (std::size_t i = 0; i < n; ++i) {
    for (unsigned pu : subsystems[i]) users[pu].push_back(fmt::format("{}", i + 1));
  }
  out += "  per PU:\n";
  for (const auto& [pu, who] : users) {
    std::string names;
    std::vector<std::string> subs;
    for (const auto& w : who) {
      if (w == "master") {
        names = "master";
      } else {
        subs.push_back(w);
      }
    }
    if (!subs.empty()) {
      if (!names.empty()) names += ", ";
      names += fmt::format("subsystem{} {}", subs.size() == 1 ? "" : "s", fmt::join(subs, ","));
    }
    out += fmt::format("    PU {:>3}: {} process{}: {}\n", pu, who.size(),
                       who.size() == 1 ? "" : "es", names);
  }
  return out;
}

nlohmann::ordered_json PlacementMap::to_json() const {
  nlohmann::ordered_json j;
  j["policy"] = policy_text;
  j["pinned"] = policy != PinPolicy::kNone;
  j["pus_per_subsystem"] = pus_per_subsystem;
  j["required_pus"] = required_pus;
  j["available_pus"] = available_pus;
  j["oversubscribed"] = oversubscribed;
  j["reason"] = reason;
  j["master"] = master;
  auto& list = j["subsystems"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    list.push_back({{"subsystem", i + 1}, {"pus", subsystems[i]}});
  }
  return j;
}

// ------------------------------------------------------------------------------- affinity

void bind_current_process(const std::vector<unsigned>& pus) {
  if (pus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned pu : pus) {
    if (pu >= static_cast<unsigned>(CPU_SETSIZE)) {
      throw std::system_error(EINVAL, std::generic_category(),
                              fmt::format("cannot pin to PU {}: out of range", pu));
    }
    CPU_SET(pu, &set);
  }
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    const int err = errno;
    throw std::system_error(
        err, std::generic_category(),
        fmt::format("cannot pin this process to PU {} (sched_setaffinity){}", format_pu_list(pus),
                    err == EINVAL ? "; none of them is usable by this process" : ""));
  }
}

std::vector<unsigned> current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
  }
  std::vector<unsigned> pus;
  for (unsigned pu = 0; pu < static_cast<unsigned>(CPU_SETSIZE); ++pu) {
    if (CPU_ISSET(pu, &set)) pus.push_back(pu);
  }
  return pus;
}

}  // namespace macrostep::placement
