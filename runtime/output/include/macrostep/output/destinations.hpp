// Every file a command writes, checked together before anything is written (DESIGN.md contract
// 5): no output is a file the command reads (the configuration), no two outputs are the same
// file, no output is a directory, a FIFO, a socket or a block device, and each can be created.
// A character device (/dev/null, a terminal) is allowed as the one output named by the user;
// nothing is derived from its name (a result there gets no metadata, steps table or checkpoint
// beside it: is_special()).
//
// The list is the one place that knows what a run writes: the path checks use it, and the run
// records it in its metadata ("files"), so what a run may write can be read off the code.
// Not thread-safe; one per command.
#pragma once

#include <string>
#include <vector>

namespace macrostep::output {

struct Destination {
  std::string role;        // what the file is, for messages: "the result", "the checkpoint", ...
  std::string path;        // as given (relative to the working directory or absolute)
  bool directory = false;  // a directory the command fills (a checkpoint's state files)
};

class Destinations {
 public:
  // `inputs`: files the command reads that no output may be, with their roles ("the
  // configuration"), compared as files: a link or another spelling of the path is the same file.
  explicit Destinations(std::vector<Destination> inputs = {});

  // Checks `path` as `role` and adds it. Throws OutputError naming path, role and the reason:
  // the path is empty or an input, another destination already names it, it is a directory
  // (for a file) or a file (for a directory), a FIFO, socket or block device, or (unless it is
  // a character device or exists) its directory does not let a file be created there.
  void add(const std::string& role, const std::string& path, bool directory = false);

  // Whether `path` is a character device (e.g. /dev/null): an output there has no siblings.
  static bool is_special(const std::string& path);

  const std::vector<Destination>& list() const { return list_; }

 private:
  std::vector<Destination> inputs_;
  std::vector<Destination> list_;
};

// The one process that writes a result holds this on the result file while it writes it, so
// that a second command naming the same file (a run started twice with one --output, a resume
// beside the run) stops before it truncates or appends anything: with two writers, each at its
// own offset, the file ends up with rows of both, torn in between.
//
// An open file description lock (fcntl F_OFD_SETLK, a write lock over the whole file) on `path`,
// which is created if missing and never truncated here. A second WriteLock on the same file, in
// this process or another, throws OutputError; the lock ends with the object or with its
// process, however that ends (the kernel drops it with the last descriptor, at SIGKILL too).
// The descriptor is close-on-exec, so worker processes do not hold it. Advisory: it orders
// macrostep commands, not other programs; it is independent of the flock() lock HDF5 takes on
// its own descriptor of the file. Not thread-safe; move-only.
class WriteLock {
 public:
  WriteLock() = default;
  explicit WriteLock(const std::string& path);
  WriteLock(WriteLock&& other) noexcept;
  WriteLock& operator=(WriteLock&& other) noexcept;
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;
  ~WriteLock();

  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Whether `a` and `b` name the same existing file (device and inode, so that "./x.toml",
// "x.toml" and a hard or symbolic link compare equal).
bool same_file(const std::string& a, const std::string& b);

// Whether `a` and `b` name one file: same_file, or (for files that do not exist) the same path
// once made absolute and normal.
bool same_path(const std::string& a, const std::string& b);

}  // namespace macrostep::output
