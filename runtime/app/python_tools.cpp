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

std::string tools_dir(const std::string& script) {
  const auto holds = [&](const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / script, ec);
  };
  if (const char* env = std::getenv("MACROSTEP_TOOLS_DIR")) return holds(env) ? env : "";
  if (holds(MACROSTEP_TOOLS_DIR)) return MACROSTEP_TOOLS_DIR;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (holds(dir / "tools")) return (dir / "tools").string();
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
