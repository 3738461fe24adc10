// The HDF5 C library, loaded on first use (private to macrostep_output).
//
// Why not linked: libhdf5_serial.so.103 brings about 35 shared libraries (curl, ssl, gnutls,
// krb5, ldap, ssh2, ...) that every process linking it loads at start: a hello-world takes
// 20 ms of CPU to start against 4 ms without (release), 86 ms against 59 ms under ASan. The
// `macrostep` binary is also every worker process, which never writes HDF5, most runs write CSV,
// and CI starts a few thousand sanitized processes. So hdf5.cpp calls HDF5 through the table
// below, which dlopen and dlsym fill when a process first writes or reads an HDF5 file.
#pragma once

#include <hdf5.h>

#include <string>
#include <string_view>

namespace macrostep::output::detail {

// Every HDF5 function hdf5.cpp calls: the table has a member of the function's name and type.
// clang-format off
#define MACROSTEP_HDF5_FUNCTIONS(X)                                                              \
  X(H5open) X(H5dont_atexit) X(H5get_libversion) X(H5Eset_auto2)                                 \
  X(H5Fcreate) X(H5Fopen) X(H5Fclose) X(H5Fflush) X(H5Fis_hdf5) X(H5Fget_vfd_handle)             \
  X(H5Gopen2) X(H5Gclose) X(H5Lexists)                                                           \
  X(H5Dcreate2) X(H5Dopen2) X(H5Dclose) X(H5Dget_space) X(H5Dset_extent) X(H5Dwrite) X(H5Dread)  \
  X(H5Dvlen_reclaim)                                                                             \
  X(H5Screate) X(H5Screate_simple) X(H5Sclose) X(H5Sselect_hyperslab)                            \
  X(H5Sget_simple_extent_ndims) X(H5Sget_simple_extent_dims)                                     \
  X(H5Pcreate) X(H5Pclose) X(H5Pset_chunk)                                                       \
  X(H5Tcopy) X(H5Tclose) X(H5Tset_size) X(H5Tset_cset) X(H5Tget_class) X(H5Tis_variable_str)     \
  X(H5Aexists) X(H5Aopen) X(H5Acreate2) X(H5Adelete) X(H5Aclose) X(H5Awrite) X(H5Aread)          \
  X(H5Aget_space) X(H5Aget_type)
// clang-format on

// HDF5's "constants" H5T_C_S1, H5T_NATIVE_INT64, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE and
// H5P_DATASET_CREATE are macros that call H5open() and then read these global variables
// (H5Tpublic.h, H5Ppublic.h): the table has a member of the variable's name holding its value,
// read once after H5open(). H5E_DEFAULT, H5P_DEFAULT, H5S_ALL, H5S_UNLIMITED, H5T_VARIABLE and
// the enumerators are plain constants.
// clang-format off
#define MACROSTEP_HDF5_VARIABLES(X)                                                              \
  X(H5T_C_S1_g) X(H5T_NATIVE_INT64_g) X(H5T_NATIVE_DOUBLE_g) X(H5T_IEEE_F64LE_g)                 \
  X(H5P_CLS_DATASET_CREATE_ID_g)
// clang-format on

// The loaded library; immutable once loaded.
struct Hdf5Library {
#define MACROSTEP_HDF5_FUNCTION_MEMBER(name) decltype(&::name) name = nullptr;
  MACROSTEP_HDF5_FUNCTIONS(MACROSTEP_HDF5_FUNCTION_MEMBER)
#undef MACROSTEP_HDF5_FUNCTION_MEMBER
#define MACROSTEP_HDF5_VARIABLE_MEMBER(name) hid_t name = H5I_INVALID_HID;
  MACROSTEP_HDF5_VARIABLES(MACROSTEP_HDF5_VARIABLE_MEMBER)
#undef MACROSTEP_HDF5_VARIABLE_MEMBER
};

// H5F_ACC_RDONLY and H5F_ACC_TRUNC are these values behind calls of H5check() and H5open()
// (H5Fpublic.h); load_hdf5_library has opened the library and checked its version.
inline constexpr unsigned kHdf5ReadOnly = 0x0000u;
inline constexpr unsigned kHdf5Truncate = 0x0002u;

// The process's HDF5 library (MACROSTEP_HDF5_SONAME, the soname of the library found at
// configure time), loaded by load_hdf5_library on the first call; every later call returns the
// same table (thread-safe). If it cannot be loaded, the OutputError of load_hdf5_library, and
// the next call tries again. `file` and `use` are for that message only.
const Hdf5Library& hdf5_library(const std::string& file, std::string_view use);

// Loads the library `soname` from the loader's search path (dlopen), looks up the table's
// functions and variables, and, before any other HDF5 call, keeps HDF5 from printing its error
// stack and from closing files at exit (hdf5_library.cpp says why), then opens the library.
// Throws OutputError "<file>: <use> needs <soname>, which could not be loaded: <dlerror()>", or
// naming the missing symbol, a failed H5open() or another major.minor version of HDF5 than the
// headers'. `use` is "HDF5 output" or "HDF5 input".
Hdf5Library load_hdf5_library(const char* soname, const std::string& file, std::string_view use);

}  // namespace macrostep::output::detail
