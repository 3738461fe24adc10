// SharedLibrary (fmu_instance.hpp): dlopen and symbol look-up for both FMI versions.
#include "fmu_instance.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <stdexcept>

namespace macrostep::fmu {

SharedLibrary::SharedLibrary(const std::string& path, std::string api) : api_(std::move(api)) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    const auto in_archive = path.find("binaries/");
    throw std::invalid_argument(
        fmt::format("its binary {} cannot be loaded: {}",
                    in_archive == std::string::npos ? path : path.substr(in_archive),
                    why ? why : "unknown reason"));
  }
}

SharedLibrary::~SharedLibrary() {
  dlclose(handle_);
}

void* SharedLibrary::find(const char* name) const {
  return dlsym(handle_, name);
}

void* SharedLibrary::symbol(const char* name) const {
  void* f = find(name);
  if (f == nullptr) {
    throw std::invalid_argument(
        fmt::format("its binary does not export {} (an {} binary must)", name, api_));
  }
  return f;
}

}  // namespace macrostep::fmu
