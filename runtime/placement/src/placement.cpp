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

std::string process_name(std::size_t subsystem) {
  return fmt::format("subsystem {}", subsystem + 1);
}

}  // namespace

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

// The processes on one PU.
struct PuUsers {
  bool master = false;
  std::vector<std::size_t> subsystems;  // 0-based

  std::size_t count() const { return (master ? 1 : 0) + subsystems.size(); }
  // "master", "subsystem 2", "master, subsystems 1,3"
  std::string names() const {
    std::string out = master ? "master" : "";
    if (!subsystems.empty()) out += (master ? ", " : "") + subsystem_numbers(subsystems);
    return out;
  }
};

// Every PU of the map with the processes on it, ascending.
std::map<unsigned, PuUsers> pu_users(const PlacementMap& map) {
  std::map<unsigned, PuUsers> users;
  for (unsigned pu : map.master) users[pu].master = true;
  for (std::size_t s = 0; s < map.subsystems.size(); ++s) {
    for (unsigned pu : map.subsystems[s]) users[pu].subsystems.push_back(s);
  }
  return users;
}

// "PU 0: master, subsystems 1,3" for every PU that more than one process has, ascending.
std::vector<std::string> shared_pus(const PlacementMap& map) {
  std::vector<std::string> out;
  for (const auto& [pu, who] : pu_users(map)) {
    if (who.count() >= 2) out.push_back(fmt::format("PU {}: {}", pu, who.names()));
  }
  return out;
}

void check_entry_count(const PinRequest& request, std::size_t subsystems) {
  if (request.map.size() != 1 + subsystems) {
    throw std::invalid_argument(fmt::format(
        "--pin {}: {} entr{} given, {} needed (one per process: the master, then subsystems "
        "1..{})",
        request.to_string(), request.map.size(), request.map.size() == 1 ? "y" : "ies",
        1 + subsystems, subsystems));
  }
}

// The user's map as it is (the rule is the comment of plan_placement); `map` has its counts and
// subsystem slots already.
void plan_map(const PinRequest& request, PlacementMap& map) {
  map.master = request.map.front();
  std::copy(request.map.begin() + 1, request.map.end(), map.subsystems.begin());
  std::set<unsigned> used;
  for (const auto& entry : request.map) used.insert(entry.begin(), entry.end());
  map.available_pus = used.size();
  std::vector<std::string> parts;
  const std::vector<std::string> shared = shared_pus(map);
  if (!shared.empty()) parts.push_back(fmt::format("shared PUs: {}", fmt::join(shared, "; ")));
  // A pinned subsystem with fewer PUs than runs: its 1 + k threads share them.
  for (std::size_t s = 0; s < map.subsystems.size(); ++s) {
    const std::size_t pus = map.subsystems[s].size();
    if (pus != 0 && pus < map.pus_per_subsystem) {
      parts.push_back(fmt::format("subsystem {} runs {} threads on {} PU{}", s + 1,
                                  map.pus_per_subsystem, pus, pus == 1 ? "" : "s"));
    }
  }
  map.oversubscribed = !parts.empty();
  if (map.oversubscribed) {
    map.reason = fmt::format("the map asks for it: {}", fmt::join(parts, "; "));
  }
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
      check_usable(topology, request);
      order = request.list;
      break;
    case PinPolicy::kMap:
      check_entry_count(request, subsystems);
      check_usable(topology, request);
      plan_map(request, map);
      return map;
  }
  map.available_pus = order.size();
  map.oversubscribed = map.required_pus > map.available_pus;
  // Counted in runs, not processes: the worker processes may host several subsystems each
  // (process_groups), and each subsystem's runs still want a PU apiece.
  const std::string shortage =
      fmt::format("the master and {} subsystem{} with {} run{} each need {} PUs, but only {} {}",
                  subsystems, subsystems == 1 ? "" : "s", pus_per_subsystem,
                  pus_per_subsystem == 1 ? "" : "s", map.required_pus, map.available_pus,
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
      "placement --pin {}: master + {} subsystem{} x {} PU{} = {} PU{} needed, {} {}{}\n",
      policy_text, n, n == 1 ? "" : "s", pus_per_subsystem, pus_per_subsystem == 1 ? "" : "s",
      required_pus, required_pus == 1 ? "" : "s", available_pus,
      policy == PinPolicy::kMap ? "in the map" : "usable",
      oversubscribed ? " (oversubscribed)" : "");
  if (oversubscribed) out += fmt::format("  oversubscribed: {}\n", reason);
  if (policy == PinPolicy::kNone) {
    out += "  not pinned: the OS places the master and every worker process\n";
    return out;
  }
  // A kMap `*` entry: the OS places that process.
  const auto pus_of = [](const std::vector<unsigned>& list) {
    return list.empty() ? std::string("not pinned") : format_pu_list(list);
  };
  const std::size_t width = std::max<std::size_t>(9, process_name(n == 0 ? 0 : n - 1).size());
  out += fmt::format("  {:<{}}  PUs\n", "process", width);
  out += fmt::format("  {:<{}}  {}\n", "master", width, pus_of(master));
  for (std::size_t i = 0; i < n; ++i) {
    out += fmt::format("  {:<{}}  {}\n", process_name(i), width, pus_of(subsystems[i]));
  }
  // Per PU: who runs there (only interesting when PUs are shared, but always printed).
  out += "  per PU:\n";
  for (const auto& [pu, who] : pu_users(*this)) {
    out += fmt::format("    PU {:>3}: {} process{}: {}\n", pu, who.count(),
                       who.count() == 1 ? "" : "es", who.names());
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
  auto& free = j["not_pinned"] = nlohmann::ordered_json::array();
  if (master.empty()) free.push_back("master");
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    if (subsystems[i].empty()) free.push_back(process_name(i));
  }
  auto& shared = j["shared"] = nlohmann::ordered_json::array();
  for (const auto& [pu, who] : pu_users(*this)) {
    if (who.count() < 2) continue;
    std::vector<std::size_t> one_based;
    for (std::size_t s : who.subsystems) one_based.push_back(s + 1);
    shared.push_back({{"pu", pu}, {"master", who.master}, {"subsystems", one_based}});
  }
  return j;
}

PinRequest group_request(const PinRequest& request, const std::vector<std::size_t>& group,
                         std::size_t subsystems) {
  if (request.policy != PinPolicy::kMap) return request;
  check_entry_count(request, subsystems);
  PinRequest part{PinPolicy::kMap, {}, {{}}};  // the agent's own entry: `*`
  for (std::size_t i : group) {
    if (i >= subsystems) {
      throw std::invalid_argument(
          fmt::format("group_request: subsystem {} of {}", i + 1, subsystems));
    }
    part.map.push_back(request.map[1 + i]);
  }
  return part;
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
