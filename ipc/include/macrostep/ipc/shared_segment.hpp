// One POSIX shared-memory object per run: the segment that the master's and the subsystems'
// rings, futex words and mirrored states live in (DESIGN.md contracts 3 and 5).
//
// Ownership and call order:
//   1. The owner (the master) calls SharedSegment::create(). It creates the object through
//      Boost.Interprocess (shared_memory_object, create_only: O_CREAT | O_EXCL, permissions
//      0600) under an unpredictable name "/macrostep-<uid>-<pid>-<hex>", reserves all its pages
//      (posix_fallocate on its descriptor: a full /dev/shm is an error here, never a SIGBUS
//      later), maps it (mapped_region, MAP_POPULATE), and writes the header (SegmentIdentity).
//      Only what Boost does not offer stays POSIX: reserving the pages, listing /dev/shm for
//      stale segments, and the signal handlers' shm_unlink (async-signal-safe).
//   2. The owner lays out the segment: allocate() / construct() hand out named, 64-byte aligned,
//      zero-filled blocks identified by their offset from the segment's first byte. Every
//      process maps the segment at a different address, so anything stored inside the segment
//      refers to other parts of it by offset, never by pointer.
//   3. Other processes of the same user call SharedSegment::attach(name), which checks magic,
//      layout version, size and owner uid and throws SegmentError with a message naming the
//      segment and the mismatch. They find blocks by name (find(), get<T>()); they never
//      allocate.
//   4. The owner removes the name when the SharedSegment is destroyed, when unlink() is called
//      (e.g. as soon as every worker has attached: the mapping stays valid, and nothing is left
//      behind even if the owner is then killed), at std::exit (atexit handler), and on fatal
//      signals once install_segment_cleanup_handlers() was called. A SIGKILLed owner cannot
//      clean up: list_stale_segments() / remove_stale_segments() find the segments of this user
//      whose owner process is gone (`macrostep cleanup`).
//
// A SharedSegment object belongs to the process that created or attached it: after fork() the
// child's copy neither unlinks the name nor changes the attach count (it checks getpid()).
// Allocation is not thread-safe (one thread of the owner lays out the segment); everything
// else is const and may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "macrostep/ipc/wait.hpp"

namespace macrostep::ipc {

inline constexpr std::uint64_t kSegmentMagic = 0x5045'5453'4f52'434dULL;  // "MCROSTEP" (LE)
inline constexpr std::uint32_t kSegmentLayoutVersion = 1;
inline constexpr std::size_t kMaxRegions = 256;
inline constexpr std::size_t kRegionNameCapacity = 40;  // bytes including the NUL
inline constexpr std::string_view kSegmentNamePrefix = "macrostep-";

enum class SegmentErrc {
  kNotFound,         // no shared-memory object of that name
  kBadMagic,         // not a macrostep segment
  kBadVersion,       // a different layout version (another build of macrostep)
  kBadSize,          // object size and header disagree, or a region lies outside the segment
  kWrongOwner,       // created by another user
  kNoSuchRegion,     // find by name failed
  kBadRegion,        // a region exists but does not hold what the caller expects
  kRegionTableFull,  // more than kMaxRegions regions
  kOutOfSpace,       // the region area is exhausted
  kInvalidArgument,  // bad region name, alignment, or allocation by a non-owner
  kSystem,           // a system call failed (message carries strerror)
};

class SegmentError : public std::runtime_error {
 public:
  SegmentError(SegmentErrc code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  SegmentErrc code() const noexcept { return code_; }

 private:
  SegmentErrc code_;
};

// A named block of the segment: [offset, offset + size) from the segment's first byte.
struct RegionRef {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct RegionEntry {
  char name[kRegionNameCapacity];  // NUL-terminated
  std::uint64_t offset;
  std::uint64_t size;
  std::uint64_t reserved;
};
static_assert(sizeof(RegionEntry) == 64);

// The immutable part of the header, written once by the owner before anyone can attach.
// Trivially copyable, so that cleanup can read it with pread() without mapping the segment.
struct SegmentIdentity {
  std::uint64_t magic;              // kSegmentMagic
  std::uint32_t layout_version;     // kSegmentLayoutVersion
  std::uint32_t header_size;        // sizeof(SegmentHeader)
  std::uint64_t total_size;         // bytes of the object; equals its st_size
  std::uint64_t heap_offset;        // first byte of the region area (64-byte aligned)
  std::uint64_t heap_size;          // bytes of the region area
  std::uint32_t owner_uid;          // getuid() of the owner
  std::int32_t owner_pid;           // getpid() of the owner
  std::uint64_t owner_start_ticks;  // /proc/<pid>/stat start time of the owner (0: unknown)
  std::int64_t creation_time_ns;    // CLOCK_REALTIME at creation
  std::uint32_t run_cpus;           // CPUs of the run (WaitPolicy::adaptive), >= 1
  std::uint32_t max_regions;        // kMaxRegions
};

struct SegmentHeader {
  SegmentIdentity id;
  // Mutable part, on its own cache line. Written by the owner at allocation time and by
  // attach/detach only, never on the hot path.
  alignas(kCacheLine) std::atomic<std::uint64_t> heap_used;  // bump pointer, owner only
  // Number of published regions. The owner fills regions[count] and then stores count + 1
  // with release; readers load it with acquire, so every entry below it (and the block it
  // names, if constructed before publishing) is completely visible.
  std::atomic<std::uint32_t> region_count;
  std::atomic<std::uint32_t> attached_processes;  // the owner counts as one
  alignas(kCacheLine) RegionEntry regions[kMaxRegions];
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(alignof(SegmentHeader) == kCacheLine);

struct SegmentOptions {
  std::size_t region_bytes = std::size_t{1} << 20;  // size of the region area
  // CPUs of the run recorded in the header for WaitPolicy::adaptive; 0: available_cpus() of
  // the owner at creation (call create() before pinning the owner to a single PU).
  std::size_t run_cpus = 0;
};

class SharedSegment {
 public:
  // Owner side. Throws SegmentError (kSystem with errno text) on failure; leaves nothing behind.
  static SharedSegment create(const SegmentOptions& options = {});
  // Any process of the same user. Throws SegmentError naming the segment and the check that
  // failed: kNotFound, kWrongOwner, kBadMagic, kBadVersion, kBadSize, kSystem.
  static SharedSegment attach(const std::string& name);
  // The same through an open descriptor of the segment (fd() of the owner, inherited by a
  // process started after unlink()); `name` only labels messages. The descriptor stays the
  // caller's. Same checks and errors as attach().
  static SharedSegment attach_fd(int fd, const std::string& name);

  SharedSegment(SharedSegment&& other) noexcept;
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  // Owner: unlinks the name (if not done yet) and unmaps. Attached: unmaps and decrements the
  // attach count. Both only in the process that created or attached the object.
  ~SharedSegment();

  // The name to pass to attach() ("/macrostep-..."); stays readable after unlink().
  const std::string& name() const noexcept { return name_; }
  bool is_owner() const noexcept { return owner_; }
  std::size_t size() const noexcept { return size_; }
  // First byte of this process's mapping; the header is at offset 0. The address differs
  // between processes: store offsets, never pointers into the segment.
  std::byte* base() const noexcept { return base_; }
  const SegmentHeader& header() const noexcept {
    return *std::launder(reinterpret_cast<const SegmentHeader*>(base_));
  }
  const SegmentIdentity& identity() const noexcept { return header().id; }

  // Owner only (kInvalidArgument otherwise). Reserves a zero-filled block of `size` bytes
  // aligned to max(64, alignment) (a power of two) under a unique `name` (1..39 characters)
  // and publishes it. Throws kOutOfSpace, kRegionTableFull, kInvalidArgument (duplicate or bad
  // name).
  RegionRef allocate(std::string_view name, std::size_t size, std::size_t alignment = kCacheLine);

  // Owner only: constructs a T in a new block and publishes the block only afterwards, so that
  // a process finding it by name sees the constructed object. T must be usable across
  // processes: no pointers, lock-free (address-free) atomics only.
  template <class T, class... Args>
  T& construct(std::string_view name, Args&&... args) {
    const RegionRef r = reserve(name, sizeof(T), alignof(T));
    T* object = new (base_ + r.offset) T(std::forward<Args>(args)...);
    publish(name, r);
    return *object;
  }

  // Published regions; safe in any process and thread.
  std::optional<RegionRef> find(std::string_view name) const noexcept;
  RegionRef region(std::string_view name) const;  // kNoSuchRegion if absent
  std::vector<std::pair<std::string, RegionRef>> regions() const;

  // The object constructed under `name` (by the owner, possibly in another process). Checks
  // that the block is large enough and aligned for T (kBadRegion); the caller asserts the type.
  template <class T>
  T& get(std::string_view name) const {
    const RegionRef r = region(name);
    check_fits(name, r, sizeof(T), alignof(T));
    return *std::launder(reinterpret_cast<T*>(base_ + r.offset));
  }

  // base() + offset, for offsets handed out by allocate() (no check on the hot path).
  std::byte* at(std::uint64_t offset) const noexcept { return base_ + offset; }

  std::uint32_t attached_processes() const noexcept {
    return header().attached_processes.load(std::memory_order_relaxed);
  }
  // WaitPolicy::adaptive(attached_processes(), run_cpus): call after every process attached.
  WaitPolicy adaptive_wait_policy() const noexcept;

  // Owner: removes the name now (idempotent). Attached processes keep their mappings; no new
  // process can attach.
  void unlink() noexcept;
  bool linked() const noexcept { return linked_; }
  // Owner: the segment's descriptor, open (close-on-exec) for the owner's lifetime, so that a
  // process started after unlink() can still attach (hand it over with dup2 when spawning).
  // -1 for an attached process.
  int fd() const noexcept;

 private:
  SharedSegment() = default;
  RegionRef reserve(std::string_view name, std::size_t size, std::size_t alignment);
  void publish(std::string_view name, const RegionRef& r);
  void check_fits(std::string_view name, const RegionRef& r, std::size_t size,
                  std::size_t alignment) const;
  void release() noexcept;
  SegmentHeader& mutable_header() const noexcept {
    return *std::launder(reinterpret_cast<SegmentHeader*>(base_));
  }

  std::string name_;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  bool owner_ = false;
  bool linked_ = false;
  pid_t pid_ = 0;  // the process this object belongs to
  struct Mapping;  // the Boost.Interprocess object and mapping (shared_segment.cpp)
  std::unique_ptr<Mapping> mapping_;
};

// A segment of this user whose owner process is gone (killed, crashed, or its pid reused).
struct StaleSegment {
  std::string name;  // "/macrostep-..."
  pid_t owner_pid = 0;
  std::int64_t creation_time_ns = 0;  // 0 if the header is unreadable
  std::uint64_t size = 0;
  std::string reason;  // why it is considered stale, for `macrostep cleanup` to print
};

// Scans the shared-memory directory (/dev/shm) for macrostep segments of this uid whose owner
// is dead: kill(pid, 0) fails with ESRCH, the pid is a zombie, or it now belongs to a process
// started later than the owner (pid reuse). Only regular files of this user that carry the
// segment header (magic and owner uid) count, whatever their name; the owner pid comes from
// the header. Segments of live owners are never listed.
std::vector<StaleSegment> list_stale_segments();
// Unlinks what list_stale_segments() finds; returns the segments removed. `older_than`: only
// those created at least that long ago (by the header's creation time); zero: all of them.
std::vector<StaleSegment> remove_stale_segments(std::chrono::nanoseconds older_than = {});

// Installs handlers for SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE and
// SIGILL that unlink every segment owned by this process and then hand the signal to the
// disposition that was installed before (restored, then re-raised; faults re-execute). Signals
// that were ignored stay ignored. Idempotent; call once in the owner's main().
void install_segment_cleanup_handlers();

}  // namespace macrostep::ipc
