// Locating and running the tools/ scripts (python_tools.hpp).
#include "python_tools.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

extern char** environ;

namespace macrostep::app {

namespace fs = std::filesystem;

namespace {

bool holds(const fs::path& dir, const std::string& script) {
  std::error_code ec;
  return fs::is_regular_file(dir / script, ec);
}

// The running executable, symbolic links resolved (empty if /proc is not readable).
fs::path executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

// Whether `path` (absolute, resolved) lies inside the folder `dir`.
bool inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  const fs::path rest = path.lexically_relative(resolved);
  return !rest.empty() && *rest.begin() != "..";
}

}  // namespace

std::string tools_dir(const std::string& script) {
  if (const char* env = std::getenv("MACROSTEP_TOOLS_DIR")) return holds(env, script) ? env : "";
  const fs::path exe = executable();
  if (exe.empty()) return {};
  const fs::path installed = (exe.parent_path() / MACROSTEP_INSTALLED_TOOLS_DIR).lexically_normal();
  if (holds(installed, script)) return installed.string();
  // The source tree serves the build tree only: an installed copy must not depend on it.
  if (inside(exe, MACROSTEP_BUILD_DIR) && holds(MACROSTEP_TOOLS_DIR, script)) {
    return MACROSTEP_TOOLS_DIR;
  }
  return {};
}

int run_python(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> words{kPython, script};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);  // what this process printed comes before the script's lines
  pid_t pid = 0;
  if (posix_spawn(&pid, kPython, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace macrostep::app
