// Placement of the master and the subsystem processes on processing units (DESIGN.md
// contract 4: placement is explicit).
//
//   Topology        what hwloc sees, restricted to the PUs this process may run on (the
//                   allowed cpuset of its cgroup intersected with its sched_getaffinity mask,
//                   e.g. under `taskset`). Tests build one by hand from {package, core, PU}.
//   parse_pin()     the --pin value: none | compact | scatter | an explicit list "0,2,4-7" |
//                   a per-process map "map:*/0/1/0/1/2/3".
//   check_usable()  whether the PUs a request names are usable (before the subsystem count
//                   is known).
//   plan_placement  which PUs the master and every subsystem process get.
//   group_request() the part of a map that one MPI node agent plans for its group.
//   bind_current_process  applies one process's PU list with sched_setaffinity.
//
// PU numbers everywhere are OS indices (the numbers of `taskset`, /proc/cpuinfo and
// sched_setaffinity), never hwloc's logical indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace macrostep::placement {

// One processing unit (hardware thread). `core` and `package` identify the core and the
// package it belongs to; they only need to be equal for PUs of the same core / package
// (hwloc's logical indices when detected). `numa` is the OS index of its NUMA node.
struct ProcessingUnit {
  unsigned package = 0;
  unsigned core = 0;
  unsigned os_index = 0;
  unsigned numa = 0;
};

// One level of cache as hwloc reports it, counted over the usable PUs.
struct CacheLevel {
  std::string name;              // "L1d", "L1i", "L2", "L3", ...
  std::uint64_t size_bytes = 0;  // size of one instance
  std::size_t instances = 0;     // instances that cover at least one usable PU
};

struct Topology {
  // The usable PUs, in hwloc's order (package, then core, then PU); a hand-built topology
  // keeps the order it is given.
  std::vector<ProcessingUnit> pus;
  std::vector<CacheLevel> caches;  // empty for a hand-built topology
  std::string source;              // "hwloc API 2.8" or "synthetic"
  std::size_t machine_pus = 0;     // PUs of the machine, usable or not (0: unknown)

  // Reads the machine with hwloc. Throws std::runtime_error if hwloc fails or no PU is usable.
  static Topology detect();
  // A hand-built topology (tests, what-if planning). Throws std::invalid_argument if `pus` is
  // empty or an OS index repeats.
  static Topology from_pus(std::vector<ProcessingUnit> pus);

  std::size_t packages() const;                 // distinct packages
  std::size_t cores() const;                    // distinct (package, core) pairs
  std::size_t numa_nodes() const;               // distinct NUMA nodes
  std::vector<unsigned> pu_os_indices() const;  // in the order of `pus`
  bool has_pu(unsigned os_index) const;

  // Multi-line human-readable summary: counts, then one line per package / core with its PUs,
  // then NUMA nodes and caches.
  std::string describe() const;
  nlohmann::ordered_json to_json() const;
};

enum class PinPolicy : std::uint8_t {
  kNone,     // no pinning: the OS places every process
  kCompact,  // fill cores in order, the PUs of a core together
  kScatter,  // spread over packages first, then cores, then the PUs of a core
  kList,     // the given PUs in the given order
  kMap,      // one PU list per process, given by the user; PUs may repeat, `*` is not pinned
};

struct PinRequest {
  PinPolicy policy = PinPolicy::kCompact;
  std::vector<unsigned> list;  // kList only: OS PU indices, no repeats, in the given order
  // kMap only: one entry per process, the master first, then subsystems 1..n; each entry the
  // OS PU indices of that process (no repeats inside one entry, in the given order), or empty
  // for `*` (not pinned: the OS places the process).
  std::vector<std::vector<unsigned>> map;

  // "none", "compact", "scatter", the list in canonical form ("0,2,4-7") or the map in
  // canonical form ("map:*/0/1/0/1/2-3").
  std::string to_string() const;
};

// Parses a --pin value. Throws std::invalid_argument whose message names the bad part: an
// unknown word, an empty item, a non-number, a reversed range "7-4", or a repeated PU.
//
// "map:M/S1/.../Sn" is an explicit per-process map: one entry per process, the master first,
// then subsystems 1..n in order; each entry is `*` (not pinned) or a PU list such as "0",
// "2,3" or "4-5" (OS indices) that becomes that process's affinity. A PU may appear in several
// entries (the processes then share it, as the user asked) but only once per entry; an entry
// may not be empty. The number of entries can only be checked against the subsystem count, by
// plan_placement.
PinRequest parse_pin(std::string_view text);

// Throws std::invalid_argument, naming the PU and the usable ones, if a PU of a kList or kMap
// request is not usable in `topology`. Nothing to check for the other policies. For the checks
// that come before the configuration (and so the subsystem count) is known.
void check_usable(const Topology& topology, const PinRequest& request);

// Formats OS PU indices with ranges for runs of consecutive numbers: {0,2,4,5,6,7} ->
// "0,2,4-7". Keeps the given order; "" for an empty list.
std::string format_pu_list(const std::vector<unsigned>& pus);

struct PlacementMap {
  PinPolicy policy = PinPolicy::kNone;
  std::string policy_text;  // PinRequest::to_string()
  std::size_t pus_per_subsystem = 1;
  std::size_t required_pus = 0;  // 1 (master) + subsystems * pus_per_subsystem
  // Usable PUs of the topology; of the list for kList; for kMap the distinct PUs in the map.
  std::size_t available_pus = 0;
  // OS PU indices of each process; all empty for PinPolicy::kNone (nothing is pinned); for
  // kMap an empty list is a `*` entry (that process is not pinned).
  std::vector<unsigned> master;
  std::vector<std::vector<unsigned>> subsystems;  // index = subsystem (0-based)
  // Some PU is given to more than one process; for kMap also: a pinned subsystem has fewer PUs
  // than runs (its 1 + k threads share its PUs).
  bool oversubscribed = false;
  std::string reason;  // why, when oversubscribed ("" otherwise)

  // A table: a summary line, one line per process with its PUs ("not pinned" for a kMap `*`),
  // and for pinned maps one line per PU with the processes sharing it. Subsystems are numbered
  // from 1, as in messages.
  std::string describe() const;
  // For the run metadata: policy, counts, flag, reason, master and subsystem PU lists (empty:
  // not pinned), the processes that are not pinned ("not_pinned": "master", "subsystem 3", ...)
  // and every PU with more than one process ("shared": [{"pu", "processes"}]).
  nlohmann::ordered_json to_json() const;
};

// Plans the placement of one master and `subsystems` subsystem processes, each subsystem
// with `pus_per_subsystem` = 1 + k PUs (k: the runs it does in parallel besides the nominal
// one). Throws std::invalid_argument if pus_per_subsystem is 0, if a kList or kMap PU is not
// usable in `topology` (check_usable), or if a kMap does not have 1 + `subsystems` entries
// (the message says how many were given and needed).
//
// kMap: every process gets its entry as it is, nothing else is planned. A subsystem with k
// extra runs runs its 1 + k threads on its entry's PUs, however many there are (one PU: they
// share it); an entry with more PUs than runs lets the OS move the threads among them. The map
// is `oversubscribed` when a PU is in more than one entry or a pinned subsystem has fewer PUs
// than runs; `reason` then names every shared PU with its processes. `*` processes are not
// pinned and are not counted on any PU.
//
// The PUs are taken in a policy order (compact: the topology's order, so the PUs of a core
// stay together; scatter: the first PU of every core with packages interleaved, then the
// second PUs, ...; list: the list order). A subsystem's first PU is its primary PU, meant for
// its nominal run; the others are its extra PUs, for the k parallel runs. A process never lists
// a PU twice (a subsystem gets fewer PUs than asked when the order has fewer).
//
// Enough PUs (1 + subsystems * pus_per_subsystem <= PUs in the order): handed out in sequence,
// the master first, then subsystem 0's PUs, subsystem 1's, ...; nothing is shared.
//
// Scarce PUs: `oversubscribed` is set and the PUs are shared by this rule, which keeps the
// nominal runs apart for as long as possible, because every subsystem's reply waits for them:
//   1. The master gets the first PU of the order. It waits on a futex while subsystems
//      integrate, so it counts as half a run in the load of a PU.
//   2. Primaries, subsystem 0 first: each takes the least loaded PU, ties broken by the spread
//      order (compact: the first PU of every core, in the topology's order, then the second
//      PUs, ...; scatter: its own order; list: the list order). So the primaries sit on distinct
//      PUs, on distinct cores first, before any two share one; the master's PU gets a primary
//      only when every other PU has one, i.e. the master keeps a PU free of primaries exactly
//      when the order has at least 1 + subsystems PUs; beyond that, the primaries share PUs
//      round-robin (12 subsystems on 2 PUs: each PU is the primary of 6).
//   3. Extra PUs, one round per extra run over all subsystems: the least loaded PU not yet in
//      the subsystem's list (so the master's PU before one with a run), ties broken by the
//      primary's core, then its package, then the policy order.
// `reason` then says how many PUs were needed and are available, whether primaries are shared,
// whether the master shares its PU, and every shared PU with the processes on it.
//
// kNone pins nothing but fills in the counts, the oversubscription flag (processes > usable
// PUs) and the reason.
//
// The worker binds its whole process to its list, so the primary only keeps the nominal run
// apart if the worker binds that run's thread to it; the order of the list is the hint for that.
PlacementMap plan_placement(const Topology& topology, const PinRequest& request,
                            std::size_t subsystems, std::size_t pus_per_subsystem);

// The request one MPI node agent plans for its `group` (global 0-based subsystem indices, in
// the group's order) of a run with `subsystems` subsystems: for kMap a map whose master entry,
// the agent's own, is `*` (the map's master entry is rank 0's; the MPI bridge does not pin rank
// 0) followed by the entries of the group's subsystems; every other policy is returned as it
// is (each agent plans it on its own node). Throws std::invalid_argument if a kMap does not
// have 1 + `subsystems` entries or a group index is out of range.
PinRequest group_request(const PinRequest& request, const std::vector<std::size_t>& group,
                         std::size_t subsystems);

// How many worker processes run the subsystems of the process executor ([executor] processes,
// --processes): one per subsystem, "auto" (no more processes than the usable cores but the
// master's), or a given number. A process hosting several subsystems runs them on its TBB
// arena; the results are the same bits whatever the count (contract 1).
struct ProcessCount {
  enum class Kind : std::uint8_t { kPerSubsystem, kAuto, kCount } kind = Kind::kPerSubsystem;
  std::size_t count = 0;  // kCount: >= 1

  std::string to_string() const;  // "per-subsystem", "auto" or the number
};

// The allowed values in words, for messages: "an integer >= 1, \"auto\" or \"per-subsystem\"".
extern const char* const kProcessCountValues;

// Parses "per-subsystem", "auto" or an integer 1..1000000. Throws std::invalid_argument whose
// message is kProcessCountValues and the text given.
ProcessCount parse_process_count(std::string_view text);

// The worker processes for `subsystems` subsystems: at most one per subsystem. kAuto: the
// master keeps one of the usable cores of `topology`: one process per subsystem while the
// subsystems fit on the others, else that many processes (the cores but one, at least 1), so
// that the master and the workers fit.
std::size_t resolve_process_count(const ProcessCount& count, std::size_t subsystems,
                                  const Topology& topology);

// The subsystems first .. first + count - 1 in `processes` groups (clamped to 1..count), each a
// contiguous block in index order, sizes differing by at most one, the larger ones first
// (10 in 4: 3, 3, 2, 2). Neighbours stay together, so a group's members are mostly coupled to
// each other. Empty for count 0.
std::vector<std::vector<std::size_t>> process_groups(std::size_t first, std::size_t count,
                                                     std::size_t processes);

// Restricts the calling thread, and the threads it creates afterwards, to `pus` (OS indices)
// with sched_setaffinity; call it in a new process before it starts threads (for the whole
// process). Does nothing for an empty list. Throws std::system_error whose message names the
// PUs and the errno text (EINVAL: none of them is usable by this process).
void bind_current_process(const std::vector<unsigned>& pus);

// The OS PU indices the calling thread may run on (sched_getaffinity), ascending.
std::vector<unsigned> current_affinity();

}  // namespace macrostep::placement
