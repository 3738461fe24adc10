// Topology::detect(): the machine as hwloc sees it, restricted to the usable PUs.
#include <fmt/format.h>
#include <hwloc.h>

#include <memory>
#include <stdexcept>

#include "macrostep/placement/placement.hpp"

namespace macrostep::placement {

namespace {

struct TopologyHandle {
  hwloc_topology_t topo = nullptr;
  TopologyHandle() {
    if (hwloc_topology_init(&topo) != 0) throw std::runtime_error("hwloc_topology_init failed");
  }
  ~TopologyHandle() { hwloc_topology_destroy(topo); }
  TopologyHandle(const TopologyHandle&) = delete;
  TopologyHandle& operator=(const TopologyHandle&) = delete;
};

struct Bitmap {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  ~Bitmap() { hwloc_bitmap_free(set); }
  Bitmap() = default;
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
};

std::string version_text() {
  const unsigned v = hwloc_get_api_version();
  // The API version (2.8 for the 2.9.x releases); the release number is not exported.
  return fmt::format("hwloc API {}.{}", v >> 16, (v >> 8) & 0xff);
}

}  // namespace

Topology Topology::detect() {
  TopologyHandle h;
  hwloc_topology_set_icache_types_filter(h.topo, HWLOC_TYPE_FILTER_KEEP_ALL);  // L1i too
  if (hwloc_topology_load(h.topo) != 0) throw std::runtime_error("hwloc_topology_load failed");

  // Usable = allowed by the cgroup/cpuset (hwloc) and by this thread's affinity mask.
  Bitmap usable;
  hwloc_bitmap_copy(usable.set, hwloc_topology_get_allowed_cpuset(h.topo));
  {
    Bitmap bound;
    // sched_getaffinity of this thread (inherited by the processes it starts).
    if (hwloc_get_cpubind(h.topo, bound.set, HWLOC_CPUBIND_THREAD) == 0 &&
        !hwloc_bitmap_iszero(bound.set)) {
      hwloc_bitmap_and(usable.set, usable.set, bound.set);
    }
  }

  Topology t;
  t.source = version_text();
  const int n_pu = hwloc_get_nbobjs_by_type(h.topo, HWLOC_OBJ_PU);
  t.machine_pus = n_pu > 0 ? static_cast<std::size_t>(n_pu) : 0;
  const int n_numa = hwloc_get_nbobjs_by_type(h.topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n_pu; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(h.topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    if (pu == nullptr || !hwloc_bitmap_isset(usable.set, pu->os_index)) continue;
    ProcessingUnit p;
    p.os_index = pu->os_index;
    const hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h.topo, HWLOC_OBJ_CORE, pu);
    // No core object (some VMs): every PU counts as its own core.
    p.core = core != nullptr ? core->logical_index : 1'000'000u + pu->logical_index;
    const hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(h.topo, HWLOC_OBJ_PACKAGE, pu);
    p.package = package != nullptr ? package->logical_index : 0;
    for (int n = 0; n < n_numa; ++n) {
      hwloc_obj_t node =
          hwloc_get_obj_by_type(h.topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
      if (node != nullptr && node->cpuset != nullptr &&
          hwloc_bitmap_isset(node->cpuset, pu->os_index)) {
        p.numa = node->os_index;
        break;
      }
    }
    t.pus.push_back(p);
  }
  if (t.pus.empty()) {
    throw std::runtime_error("hwloc: no processing unit is usable by this process");
  }

  // Caches from L1 outwards: name, size of one instance, instances covering a usable PU.
  const hwloc_obj_type_t cache_types[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
      HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
  for (const hwloc_obj_type_t type : cache_types) {
    const int n = hwloc_get_nbobjs_by_type(h.topo, type);
    CacheLevel level;
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(h.topo, type, static_cast<unsigned>(i));
      if (obj == nullptr || obj->attr == nullptr || obj->cpuset == nullptr ||
          !hwloc_bitmap_intersects(obj->cpuset, usable.set)) {
        continue;
      }
      if (level.instances == 0) {
        char name[32];
        hwloc_obj_type_snprintf(name, sizeof(name), obj, 0);
        level.name = name;
        level.size_bytes = obj->attr->cache.size;
      }
      ++level.instances;
    }
    if (level.instances > 0) t.caches.push_back(level);
  }
  return t;
}

}  // namespace macrostep::placement
