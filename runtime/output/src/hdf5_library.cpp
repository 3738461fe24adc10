// Loading the HDF5 library on first use (hdf5_library.hpp).
#include "hdf5_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <type_traits>

#include "macrostep/output/csv.hpp"

#ifndef MACROSTEP_HDF5_SONAME
#error "MACROSTEP_HDF5_SONAME (HDF5's soname) comes from runtime/output/CMakeLists.txt"
#endif

namespace macrostep::output::detail {

namespace {

// dlerror()'s text for the last failed dlopen or dlsym.
std::string loader_reason() {
  const char* why = dlerror();
  return why != nullptr ? why : "no reason given";
}

// The addresses of the library's variables, read once H5open() has set them.
struct Addresses {
#define MACROSTEP_HDF5_ADDRESS_MEMBER(name) const hid_t* name = nullptr;
  MACROSTEP_HDF5_VARIABLES(MACROSTEP_HDF5_ADDRESS_MEMBER)
#undef MACROSTEP_HDF5_ADDRESS_MEMBER
};

// Looks up every function of the table and every variable's address by name; false, and the
// first missing symbol with the loader's reason in `missing`, if one is not there.
bool look_up(void* handle, Hdf5Library& library, Addresses& addresses, std::string& missing) {
  const auto bind = [handle, &missing](auto& slot, const char* name) {
    if (!missing.empty()) return;
    dlerror();
    void* address = dlsym(handle, name);
    if (address == nullptr) {
      missing = fmt::format("the symbol {} ({})", name, loader_reason());
      return;
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
  };
#define MACROSTEP_HDF5_BIND_FUNCTION(name) bind(library.name, #name);
  MACROSTEP_HDF5_FUNCTIONS(MACROSTEP_HDF5_BIND_FUNCTION)
#undef MACROSTEP_HDF5_BIND_FUNCTION
#define MACROSTEP_HDF5_BIND_VARIABLE(name) bind(addresses.name, #name);
  MACROSTEP_HDF5_VARIABLES(MACROSTEP_HDF5_BIND_VARIABLE)
#undef MACROSTEP_HDF5_BIND_VARIABLE
  return missing.empty();
}

}  // namespace

Hdf5Library load_hdf5_library(const char* soname, const std::string& file, std::string_view use) {
  const auto fail = [&](const std::string& what) {
    return OutputError(fmt::format("{}: {} needs {}, which {}", file, use, soname, what));
  };
  // RTLD_LOCAL: HDF5's symbols stay out of the global namespace, where no one else looks for
  // them; a library that h5py (say) loaded before is the same, already loaded, one.
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw fail("could not be loaded: " + loader_reason());
  Hdf5Library h5;
  Addresses addresses;
  std::string missing;
  if (!look_up(handle, h5, addresses, missing)) {
    dlclose(handle);  // nothing of it has run
    throw fail("could not be loaded: it lacks " + missing);
  }
  // Before any other HDF5 call: HDF5 prints its error stack to stderr unless told not to (our
  // errors are the messages), and it closes every file it still knows at exit. A file whose
  // close failed (a full disk) stays known half-closed, and closing it again at exit crashes
  // the library: every Hdf5File closes its file itself, so the exit handler is not installed.
  // From here on the library stays loaded, whatever happens.
  h5.H5dont_atexit();
  h5.H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (h5.H5open() < 0) throw fail("could not be initialised (H5open failed)");
  // H5check() would abort the process on another version than the headers': an error instead.
  // The soname already stands for the ABI; the release number may differ.
  unsigned lib_major = 0, lib_minor = 0, lib_release = 0;
  if (h5.H5get_libversion(&lib_major, &lib_minor, &lib_release) < 0 || lib_major != H5_VERS_MAJOR ||
      lib_minor != H5_VERS_MINOR) {
    throw fail(fmt::format("is HDF5 {}.{}.{}, not the HDF5 {}.{} macrostep was built for",
                           lib_major, lib_minor, lib_release, H5_VERS_MAJOR, H5_VERS_MINOR));
  }
#define MACROSTEP_HDF5_READ_VARIABLE(name) h5.name = *addresses.name;
  MACROSTEP_HDF5_VARIABLES(MACROSTEP_HDF5_READ_VARIABLE)
#undef MACROSTEP_HDF5_READ_VARIABLE
  return h5;
}

const Hdf5Library& hdf5_library(const std::string& file, std::string_view use) {
  // An initialisation that throws leaves the variable uninitialised: the next call tries again.
  static const Hdf5Library library = load_hdf5_library(MACROSTEP_HDF5_SONAME, file, use);
  return library;
}

}  // namespace macrostep::output::detail
