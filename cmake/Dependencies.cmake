# Every dependency comes from Debian 12 packages (tools/setup installs them).

# SUNDIALS: the snapshot code reads IDA's private memory layout, so the exact
# version matters; subsystems/ida checks SUNDIALS_VERSION at compile time as well.
find_path(SUNDIALS_INCLUDE_DIR ida/ida_impl.h REQUIRED)
file(STRINGS "${SUNDIALS_INCLUDE_DIR}/sundials/sundials_config.h" _sundials_version_line
     REGEX "#define SUNDIALS_VERSION \"")
string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" SUNDIALS_VERSION "${_sundials_version_line}")
if(NOT SUNDIALS_VERSION VERSION_EQUAL 6.4.1)
  message(FATAL_ERROR "macrostep's workspace snapshot is written for SUNDIALS 6.4.1 "
                      "(Debian 12 libsundials-dev); found ${SUNDIALS_VERSION}")
endif()
foreach(_lib ida nvecserial sunlinsolklu sunlinsoldense sunmatrixsparse sunmatrixdense
             sunnonlinsolnewton generic)
  find_library(SUNDIALS_${_lib}_LIBRARY NAMES sundials_${_lib})
  if(SUNDIALS_${_lib}_LIBRARY)
    list(APPEND SUNDIALS_LIBRARIES ${SUNDIALS_${_lib}_LIBRARY})
  elseif(NOT _lib STREQUAL "generic")
    message(FATAL_ERROR "sundials_${_lib} not found (install libsundials-dev)")
  endif()
endforeach()

# KLU has no CMake config; SUNDIALS uses its 64-bit (klu_l_*) interface.
find_path(KLU_INCLUDE_DIR klu.h PATH_SUFFIXES suitesparse REQUIRED)
find_library(KLU_LIBRARY klu REQUIRED)
find_library(AMD_LIBRARY amd REQUIRED)
find_library(COLAMD_LIBRARY colamd REQUIRED)
find_library(BTF_LIBRARY btf REQUIRED)
find_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig REQUIRED)

add_library(macrostep_sundials INTERFACE)
target_include_directories(macrostep_sundials SYSTEM INTERFACE ${SUNDIALS_INCLUDE_DIR} ${KLU_INCLUDE_DIR})
target_link_libraries(macrostep_sundials INTERFACE ${SUNDIALS_LIBRARIES} ${KLU_LIBRARY}
                      ${AMD_LIBRARY} ${COLAMD_LIBRARY} ${BTF_LIBRARY} ${SUITESPARSECONFIG_LIBRARY} m)

find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(TBB REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
if(MACROSTEP_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
