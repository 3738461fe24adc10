#include "macrostep/ipc/shared_segment.hpp"

#include "macrostep/ipc/proc_stat.hpp"

#include <fmt/format.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace macrostep::ipc {

namespace bip = boost::interprocess;

// The Boost.Interprocess objects behind a segment: the owner's shared-memory object (its
// descriptor stays open, see fd()) and this process's mapping.
struct SharedSegment::Mapping {
  std::optional<bip::shared_memory_object> object;
  bip::mapped_region region;
};

namespace {

constexpr const char* kShmDirectory = "/dev/shm";

std::uint64_t round_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

[[noreturn]] void throw_errno(const std::string& what, int err) {
  throw SegmentError(SegmentErrc::kSystem, fmt::format("{}: {}", what, std::strerror(err)));
}

std::string segment_label(std::string_view name) {
  return fmt::format("shared-memory segment {}", name);
}

// ---------------------------------------------------------------------------------------------
// Names owned by this process, for the atexit and signal handlers. A fixed table of lock-free
// atomics: the handlers run in signal context and must neither allocate nor lock.

constexpr int kRegistrySlots = 64;
constexpr int kSlotFree = 0;
constexpr int kSlotBusy = 1;  // being written or cleared: handlers skip it
constexpr int kSlotLive = 2;

struct RegistrySlot {
  std::atomic<int> state{kSlotFree};
  pid_t pid = 0;
  char name[128] = {};
};
static_assert(std::atomic<int>::is_always_lock_free);

RegistrySlot g_registry[kRegistrySlots];

void register_owned_name(const std::string& name) noexcept {
  if (name.size() >= sizeof(RegistrySlot::name)) return;
  for (auto& slot : g_registry) {
    int expected = kSlotFree;
    if (slot.state.compare_exchange_strong(expected, kSlotBusy, std::memory_order_acquire)) {
      slot.pid = getpid();
      std::memcpy(slot.name, name.c_str(), name.size() + 1);
      slot.state.store(kSlotLive, std::memory_order_release);
      return;
    }
  }
  // Table full (64 live segments in one process): the segment works, but only its destructor
  // and remove_stale_segments() remove it.
}

void deregister_owned_name(const std::string& name) noexcept {
  for (auto& slot : g_registry) {
    int expected = kSlotLive;
    if (slot.state.load(std::memory_order_acquire) == kSlotLive && slot.pid == getpid() &&
        std::strcmp(slot.name, name.c_str()) == 0 &&
        slot.state.compare_exchange_strong(expected, kSlotBusy, std::memory_order_acquire)) {
      slot.name[0] = '\0';
      slot.state.store(kSlotFree, std::memory_order_release);
      return;
    }
  }
}

// Async-signal-safe: atomics, getpid() and shm_unlink() (glibc: unlink() of /dev/shm/<name>).
void unlink_owned_names() noexcept {
  const pid_t self = getpid();
  for (auto& slot : g_registry) {
    if (slot.state.load(std::memory_order_acquire) == kSlotLive && slot.pid == self) {
      shm_unlink(slot.name);
    }
  }
}

std::once_flag g_atexit_once;

void ensure_atexit_cleanup() {
  std::call_once(g_atexit_once, [] { std::atexit([] { unlink_owned_names(); }); });
}

constexpr int kCleanupSignals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
                                   SIGSEGV, SIGBUS,  SIGFPE, SIGILL};
struct sigaction g_previous_action[NSIG];

bool is_fault(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

void on_cleanup_signal(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  unlink_owned_names();
  sigaction(sig, &g_previous_action[sig], nullptr);
  // A real fault re-executes the faulting instruction on return and reaches the previous
  // disposition that way; a sent signal (si_code <= 0) is re-sent. It stays pending until this
  // handler returns, because the signal is blocked while its handler runs.
  if (!is_fault(sig) || info == nullptr || info->si_code <= 0) raise(sig);
  errno = saved_errno;
}

std::once_flag g_signal_once;

// ---------------------------------------------------------------------------------------------

std::string random_hex(std::size_t bytes) {
  unsigned char buf[16];
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = getrandom(buf + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("getrandom", errno);
    }
    got += static_cast<std::size_t>(n);
  }
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) out += fmt::format("{:02x}", buf[i]);
  return out;
}

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Removes the name of a segment whose creation failed (unless dismissed).
struct CreatedName {
  std::string name;
  bool armed = false;
  ~CreatedName() {
    if (armed) {
      bip::shared_memory_object::remove(name.c_str());
      deregister_owned_name(name);
    }
  }
};

// The descriptor's errno-style reason, for messages.
[[noreturn]] void throw_boost(const std::string& what, const bip::interprocess_exception& e) {
  const int err = e.get_native_error();
  throw SegmentError(SegmentErrc::kSystem,
                     fmt::format("{}: {}", what, err != 0 ? std::strerror(err) : e.what()));
}

// A descriptor of a segment that the caller owns (attach_fd), as Boost's MemoryMappable.
class BorrowedDescriptor {
 public:
  explicit BorrowedDescriptor(int fd) : fd_(fd) {}
  bip::mapping_handle_t get_mapping_handle() const {
    bip::mapping_handle_t h;
    h.handle = fd_;
    h.is_xsi = false;
    return h;
  }
  bip::mode_t get_mode() const { return bip::read_write; }

 private:
  int fd_;
};

// Maps the whole object and faults every page in now (MAP_POPULATE): the hot path never takes a
// page fault, and the pages were reserved at creation.
template <class Mappable>
bip::mapped_region map_all(const Mappable& object, std::uint64_t size, const std::string& name) {
  try {
    return bip::mapped_region(object, bip::read_write, 0, size, nullptr, MAP_POPULATE);
  } catch (const bip::interprocess_exception& e) {
    throw_boost(fmt::format("mmap({})", name), e);
  }
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------

SharedSegment SharedSegment::create(const SegmentOptions& options) {
  ensure_atexit_cleanup();
  const long page = sysconf(_SC_PAGESIZE);
  const std::uint64_t heap_offset = round_up(sizeof(SegmentHeader), kCacheLine);
  const std::uint64_t total = round_up(heap_offset + round_up(options.region_bytes, kCacheLine),
                                       static_cast<std::uint64_t>(page > 0 ? page : 4096));

  const std::string prefix = fmt::format("/{}{}-{}-", kSegmentNamePrefix, getuid(), getpid());
  CreatedName created;
  auto mapping = std::make_unique<Mapping>();
  for (int attempt = 0;; ++attempt) {
    created.name = prefix + random_hex(8);
    try {
      // create_only: O_CREAT | O_EXCL; Boost sets the mode with fchmod, so the umask cannot
      // change it.
      mapping->object.emplace(bip::create_only, created.name.c_str(), bip::read_write,
                              bip::permissions(0600));
      break;
    } catch (const bip::interprocess_exception& e) {
      if (e.get_error_code() != bip::already_exists_error || attempt == 8) {
        throw_boost(fmt::format("shm_open({})", created.name), e);
      }
    }
  }
  created.armed = true;
  register_owned_name(created.name);
  const int fd = mapping->object->get_mapping_handle().handle;
  // Boost opens without O_CLOEXEC: no other process may inherit the descriptor (workers attach
  // through a duplicate made for them).
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    throw_errno(fmt::format("fcntl({})", created.name), errno);
  }
  // Reserve every page now (this also sets the size; truncate() would leave the object sparse):
  // on a full /dev/shm a sparse object would map, and the first touch of a page without backing
  // store would kill with SIGBUS.
  if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(total)); err != 0) {
    throw_errno(fmt::format("cannot reserve {} bytes for shared-memory segment {} in {} (is it "
                            "full? see `df {}`)",
                            total, created.name, kShmDirectory, kShmDirectory),
                err);
  }
  mapping->region = map_all(*mapping->object, total, created.name);
  void* p = mapping->region.get_address();

  auto* header = new (p) SegmentHeader();  // the object is zero-filled; value-initialise
  SegmentIdentity& id = header->id;
  id.magic = kSegmentMagic;
  id.layout_version = kSegmentLayoutVersion;
  id.header_size = sizeof(SegmentHeader);
  id.total_size = total;
  id.heap_offset = heap_offset;
  id.heap_size = total - heap_offset;
  id.owner_uid = static_cast<std::uint32_t>(getuid());
  id.owner_pid = static_cast<std::int32_t>(getpid());
  const auto self = read_proc_stat(getpid());
  id.owner_start_ticks = self ? self->start_ticks : 0;
  id.creation_time_ns = realtime_ns();
  id.run_cpus = static_cast<std::uint32_t>(options.run_cpus ? options.run_cpus : available_cpus());
  id.max_regions = static_cast<std::uint32_t>(kMaxRegions);
  header->heap_used.store(0, std::memory_order_relaxed);
  header->region_count.store(0, std::memory_order_relaxed);
  header->attached_processes.store(1, std::memory_order_release);

  SharedSegment segment;
  segment.name_ = created.name;
  segment.base_ = static_cast<std::byte*>(p);
  segment.size_ = total;
  segment.owner_ = true;
  segment.linked_ = true;
  segment.pid_ = getpid();
  // The object stays open (close-on-exec): a worker started after unlink() attaches through a
  // duplicate of its descriptor.
  segment.mapping_ = std::move(mapping);
  created.armed = false;  // the segment object owns the name from here on
  return segment;
}

SharedSegment SharedSegment::attach(const std::string& name) {
  const std::string label = segment_label(name);
  std::optional<bip::shared_memory_object> object;
  try {
    object.emplace(bip::open_only, name.c_str(), bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error) {
      throw SegmentError(
          SegmentErrc::kNotFound,
          fmt::format("{} does not exist (its owner has exited or removed it)", label));
    }
    if (e.get_error_code() == bip::security_error) {
      throw SegmentError(SegmentErrc::kWrongOwner,
                         fmt::format("{}: permission denied (it belongs to another user)", label));
    }
    throw_boost(fmt::format("shm_open({})", name), e);
  }
  const int fd = object->get_mapping_handle().handle;
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) throw_errno(fmt::format("fcntl({})", name), errno);
  return attach_fd(fd, name);  // the object closes its descriptor; the mapping stays
}

SharedSegment SharedSegment::attach_fd(int fd, const std::string& name) {
  const std::string label = segment_label(name);
  struct stat st {};
  if (fstat(fd, &st) != 0) throw_errno(fmt::format("fstat({})", name), errno);
  if (st.st_uid != geteuid()) {
    throw SegmentError(SegmentErrc::kWrongOwner,
                       fmt::format("{} is owned by uid {}, this process runs as uid {}", label,
                                   st.st_uid, geteuid()));
  }
  SegmentIdentity id{};
  if (static_cast<std::uint64_t>(st.st_size) < sizeof(SegmentIdentity) ||
      pread(fd, &id, sizeof(id), 0) != static_cast<ssize_t>(sizeof(id))) {
    throw SegmentError(
        SegmentErrc::kBadSize,
        fmt::format("{} is {} bytes, too small to hold a macrostep header", label, st.st_size));
  }
  if (id.magic != kSegmentMagic) {
    throw SegmentError(SegmentErrc::kBadMagic,
                       fmt::format("{} has magic {:#018x}, expected {:#018x}: not a macrostep "
                                   "segment",
                                   label, id.magic, kSegmentMagic));
  }
  if (id.layout_version != kSegmentLayoutVersion || id.header_size != sizeof(SegmentHeader)) {
    throw SegmentError(SegmentErrc::kBadVersion,
                       fmt::format("{} has layout version {} (header {} bytes), this build "
                                   "expects version {} (header {} bytes): master and worker "
                                   "are different builds",
                                   label, id.layout_version, id.header_size, kSegmentLayoutVersion,
                                   sizeof(SegmentHeader)));
  }
  if (id.total_size != static_cast<std::uint64_t>(st.st_size) ||
      id.heap_offset < sizeof(SegmentHeader) || id.heap_offset + id.heap_size != id.total_size) {
    throw SegmentError(SegmentErrc::kBadSize,
                       fmt::format("{}: header says {} bytes (region area {} + {}), the object "
                                   "has {} bytes",
                                   label, id.total_size, id.heap_offset, id.heap_size, st.st_size));
  }
  if (id.owner_uid != getuid()) {
    throw SegmentError(SegmentErrc::kWrongOwner,
                       fmt::format("{} was created by uid {}, this process runs as uid {}", label,
                                   id.owner_uid, getuid()));
  }
  auto mapping = std::make_unique<Mapping>();
  mapping->region = map_all(BorrowedDescriptor(fd), id.total_size, name);

  SharedSegment segment;
  segment.name_ = name;
  segment.base_ = static_cast<std::byte*>(mapping->region.get_address());
  segment.mapping_ = std::move(mapping);
  segment.size_ = id.total_size;
  segment.owner_ = false;
  segment.linked_ = true;
  segment.pid_ = getpid();
  segment.mutable_header().attached_processes.fetch_add(1, std::memory_order_relaxed);
  return segment;
}

SharedSegment::SharedSegment(SharedSegment&& other) noexcept
    : name_(std::move(other.name_)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::exchange(other.owner_, false)),
      linked_(std::exchange(other.linked_, false)),
      pid_(std::exchange(other.pid_, 0)),
      mapping_(std::move(other.mapping_)) {}

SharedSegment& SharedSegment::operator=(SharedSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
    linked_ = std::exchange(other.linked_, false);
    pid_ = std::exchange(other.pid_, 0);
    mapping_ = std::move(other.mapping_);
  }
  return *this;
}

SharedSegment::~SharedSegment() {
  release();
}

void SharedSegment::release() noexcept {
  if (!mapping_) return;
  if (getpid() == pid_) {
    if (owner_) {
      unlink();
    } else {
      mutable_header().attached_processes.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // A forked child's copy only drops its inherited mapping (and descriptor).
  mapping_.reset();
  base_ = nullptr;
}

int SharedSegment::fd() const noexcept {
  return mapping_ && mapping_->object ? mapping_->object->get_mapping_handle().handle : -1;
}

void SharedSegment::unlink() noexcept {
  if (!owner_ || !linked_ || getpid() != pid_) return;
  bip::shared_memory_object::remove(name_.c_str());
  deregister_owned_name(name_);
  linked_ = false;
}

WaitPolicy SharedSegment::adaptive_wait_policy() const noexcept {
  return WaitPolicy::adaptive(attached_processes(), identity().run_cpus);
}

RegionRef SharedSegment::reserve(std::string_view name, std::size_t size, std::size_t alignment) {
  const std::string label = segment_label(name_);
  if (!owner_ || getpid() != pid_) {
    throw SegmentError(SegmentErrc::kInvalidArgument,
                       fmt::format("{}: only the owning process allocates regions (asked for "
                                   "'{}')",
                                   label, name));
  }
  if (name.empty() || name.size() >= kRegionNameCapacity ||
      name.find('\0') != std::string_view::npos) {
    throw SegmentError(SegmentErrc::kInvalidArgument,
                       fmt::format("{}: region name '{}' must have 1 to {} characters", label, name,
                                   kRegionNameCapacity - 1));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw SegmentError(SegmentErrc::kInvalidArgument,
                       fmt::format("{}: alignment {} of region '{}' is not a power of two", label,
                                   alignment, name));
  }
  if (find(name)) {
    throw SegmentError(SegmentErrc::kInvalidArgument,
                       fmt::format("{}: region '{}' exists already", label, name));
  }
  SegmentHeader& h = mutable_header();
  if (h.region_count.load(std::memory_order_relaxed) >= kMaxRegions) {
    throw SegmentError(SegmentErrc::kRegionTableFull,
                       fmt::format("{}: more than {} regions", label, kMaxRegions));
  }
  const std::uint64_t align = std::max<std::uint64_t>(alignment, kCacheLine);
  const std::uint64_t used = h.heap_used.load(std::memory_order_relaxed);
  const std::uint64_t start = round_up(h.id.heap_offset + used, align);
  const std::uint64_t end = start + round_up(std::max<std::uint64_t>(size, 1), kCacheLine);
  if (end > h.id.total_size) {
    throw SegmentError(
        SegmentErrc::kOutOfSpace,
        fmt::format("{}: region '{}' needs {} bytes, {} of {} are left (raise "
                    "SegmentOptions::region_bytes)",
                    label, name, size, h.id.total_size - std::min(start, h.id.total_size),
                    h.id.heap_size));
  }
  h.heap_used.store(end - h.id.heap_offset, std::memory_order_relaxed);
  return RegionRef{start, size};
}

void SharedSegment::publish(std::string_view name, const RegionRef& r) {
  SegmentHeader& h = mutable_header();
  const std::uint32_t index = h.region_count.load(std::memory_order_relaxed);
  RegionEntry& e = h.regions[index];
  std::memset(e.name, 0, sizeof(e.name));
  std::memcpy(e.name, name.data(), name.size());
  e.offset = r.offset;
  e.size = r.size;
  e.reserved = 0;
  // Release: the entry and the object constructed in the block are visible to every reader
  // that loads the new count with acquire (find()).
  h.region_count.store(index + 1, std::memory_order_release);
}

RegionRef SharedSegment::allocate(std::string_view name, std::size_t size, std::size_t alignment) {
  const RegionRef r = reserve(name, size, alignment);
  publish(name, r);
  return r;
}

std::optional<RegionRef> SharedSegment::find(std::string_view name) const noexcept {
  const SegmentHeader& h = header();
  const std::uint32_t n =
      std::min<std::uint32_t>(h.region_count.load(std::memory_order_acquire), kMaxRegions);
  for (std::uint32_t i = 0; i < n; ++i) {
    const RegionEntry& e = h.regions[i];
    if (std::string_view(e.name, strnlen(e.name, sizeof(e.name))) == name) {
      if (e.offset < h.id.heap_offset || e.offset + e.size > size_) return std::nullopt;
      return RegionRef{e.offset, e.size};
    }
  }
  return std::nullopt;
}

RegionRef SharedSegment::region(std::string_view name) const {
  if (auto r = find(name)) return *r;
  throw SegmentError(SegmentErrc::kNoSuchRegion,
                     fmt::format("{} has no region '{}'", segment_label(name_), name));
}

std::vector<std::pair<std::string, RegionRef>> SharedSegment::regions() const {
  const SegmentHeader& h = header();
  const std::uint32_t n =
      std::min<std::uint32_t>(h.region_count.load(std::memory_order_acquire), kMaxRegions);
  std::vector<std::pair<std::string, RegionRef>> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    const RegionEntry& e = h.regions[i];
    out.emplace_back(std::string(e.name, strnlen(e.name, sizeof(e.name))),
                     RegionRef{e.offset, e.size});
  }
  return out;
}

void SharedSegment::check_fits(std::string_view name, const RegionRef& r, std::size_t size,
                               std::size_t alignment) const {
  const auto address = reinterpret_cast<std::uintptr_t>(base_ + r.offset);
  if (r.size < size || address % alignment != 0) {
    throw SegmentError(SegmentErrc::kBadRegion,
                       fmt::format("{}: region '{}' has {} bytes at offset {}, the caller "
                                   "expects an object of {} bytes aligned to {}",
                                   segment_label(name_), name, r.size, r.offset, size, alignment));
  }
}

// ---------------------------------------------------------------------------------------------

namespace {

// The stale segments, optionally unlinking them.
std::vector<StaleSegment> scan_stale_segments(bool remove, std::chrono::nanoseconds older_than) {
  const std::int64_t newest = realtime_ns() - older_than.count();
  std::vector<StaleSegment> out;
  const std::string prefix = fmt::format("{}{}-", kSegmentNamePrefix, getuid());  // no '/'
  DIR* dir = opendir(kShmDirectory);
  if (dir == nullptr) return out;
  std::vector<std::string> candidates;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view file(entry->d_name);
    if (file.substr(0, prefix.size()) == prefix) candidates.emplace_back(file);
  }
  closedir(dir);

  for (const std::string& file : candidates) {
    StaleSegment s;
    s.name = fmt::format("/{}", file);
    std::uint64_t start_ticks = 0;

    const int fd = shm_open(s.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) continue;  // removed meanwhile, or not ours
    {
      FdCloser closer{fd};
      struct stat st {};
      if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
      s.size = static_cast<std::uint64_t>(st.st_size);
      // Only a file that carries our header is ours, whatever its name says.
      SegmentIdentity id{};
      if (s.size < sizeof(id) || pread(fd, &id, sizeof(id), 0) != sizeof(id) ||
          id.magic != kSegmentMagic || id.owner_uid != getuid()) {
        continue;
      }
      s.owner_pid = id.owner_pid;
      start_ticks = id.owner_start_ticks;
      s.creation_time_ns = id.creation_time_ns;
    }
    if (s.owner_pid <= 0) {
      s.reason = "no owner pid in its header";
    } else if (kill(s.owner_pid, 0) != 0 && errno == ESRCH) {
      s.reason = fmt::format("owner pid {} does not exist", s.owner_pid);
    } else if (const auto stat = read_proc_stat(s.owner_pid)) {
      if (stat->state == 'Z' || stat->state == 'X') {
        s.reason = fmt::format("owner pid {} has exited (zombie)", s.owner_pid);
      } else if (start_ticks != 0 && stat->start_ticks != start_ticks) {
        s.reason = fmt::format("pid {} now belongs to another process (the owner has exited)",
                               s.owner_pid);
      }
    }
    if (s.reason.empty()) continue;  // the owner is alive
    if (s.creation_time_ns > newest) continue;
    if (remove && !bip::shared_memory_object::remove(s.name.c_str())) continue;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<StaleSegment> list_stale_segments() {
  return scan_stale_segments(false, {});
}

std::vector<StaleSegment> remove_stale_segments(std::chrono::nanoseconds older_than) {
  return scan_stale_segments(true, older_than);
}

void install_segment_cleanup_handlers() {
  ensure_atexit_cleanup();
  std::call_once(g_signal_once, [] {
    for (const int sig : kCleanupSignals) {
      struct sigaction previous {};
      if (sigaction(sig, nullptr, &previous) != 0) continue;
      if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
      g_previous_action[sig] = previous;
      struct sigaction action {};
      action.sa_sigaction = on_cleanup_signal;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      sigaction(sig, &action, nullptr);
    }
  });
}

}  // namespace macrostep::ipc
