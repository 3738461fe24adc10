// The plugin loader (plugin.hpp).
#include "macrostep/plugin/plugin.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <tuple>

#include "macrostep/plugin/plugin_api.hpp"
#include "macrostep/plugin/plugin_checks.hpp"

namespace macrostep::plugin {

namespace {

struct LoadedLibrary {
  macrostep_plugin_create_fn* create = nullptr;
};

// The libraries loaded so far, by path. Never closed: subsystems built from them may live until
// the process ends.
const LoadedLibrary& load(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, LoadedLibrary> loaded;
  const std::lock_guard lock(mutex);
  if (const auto it = loaded.find(path); it != loaded.end()) return it->second;
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("plugin " + path + ": " + why);
  };
  if (path.empty() || path.front() != '/') fail("the path must be absolute");
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    fail(why != nullptr ? why : "cannot be loaded");
  }
  auto* version = reinterpret_cast<macrostep_plugin_api_version_fn*>(
      dlsym(handle, "macrostep_plugin_api_version"));
  auto* create =
      reinterpret_cast<macrostep_plugin_create_fn*>(dlsym(handle, "macrostep_plugin_create"));
  if (version == nullptr || create == nullptr) {
    dlclose(handle);
    fail(
        "no macrostep_plugin_api_version / macrostep_plugin_create (define them with "
        "MACROSTEP_PLUGIN(YourModel) from macrostep/plugin/plugin_api.hpp)");
  }
  if (const std::uint32_t v = version(); v != MACROSTEP_PLUGIN_API_VERSION) {
    dlclose(handle);
    fail("built for plugin API version " + std::to_string(v) + ", this macrostep loads version " +
         std::to_string(MACROSTEP_PLUGIN_API_VERSION) + ": rebuild it against these headers");
  }
  return loaded.emplace(path, LoadedLibrary{create}).first->second;
}

// The descriptions whose initial point passed its check in this process: a run builds a
// subsystem more than once (the configuration, the system, the monolithic run), and the check
// of a large plugin costs some evaluations of its functions.
class InitialChecks {
 public:
  bool passed(const PluginDescription& d) {
    const std::lock_guard lock(mutex_);
    return passed_.contains(key(d));
  }
  void pass(const PluginDescription& d) {
    const std::lock_guard lock(mutex_);
    passed_.insert(key(d));
  }

 private:
  using Key = std::tuple<std::string, std::string, bool>;
  static Key key(const PluginDescription& d) {
    return {d.library, d.parameters, d.check_jacobians};
  }
  std::mutex mutex_;
  std::set<Key> passed_;
};

}  // namespace

std::unique_ptr<model::Subsystem> build_plugin_subsystem(const PluginDescription& description) {
  const LoadedLibrary& library = load(description.library);
  char error[1024] = "";
  model::Subsystem* built = library.create(description.parameters.c_str(), error, sizeof error);
  if (built == nullptr) {
    throw std::invalid_argument("plugin " + description.library + " refused its parameters: " +
                                (error[0] != '\0' ? std::string(error) : "no reason given"));
  }
  std::unique_ptr<model::Subsystem> subsystem(built);
  check_declarations(*subsystem, description.library);
  static InitialChecks initial_checks;
  if (!initial_checks.passed(description)) {
    check_initial_point(*subsystem, description.library, description.check_jacobians);
    initial_checks.pass(description);
  }
  return subsystem;
}

}  // namespace macrostep::plugin
