# `cmake --install BUILD --prefix P` (docs/guide/plugins.md): what a user runs and what a plugin
# builds against, and nothing else (no tests, benchmarks or internal libraries):
#   P/bin/macrostep                          the command line
#   P/share/macrostep/*.py                   the scripts it runs (`plot`, `stability`), found
#                                            from bin/ through a relative path (runtime/app)
#   P/include/macrostep/{model,plugin}/      the two headers a plugin includes
#   P/lib/libmacrostep_model.a               the Subsystem code a plugin inherits (PIC)
#   P/lib/cmake/macrostep/                   the package: find_package(macrostep) gives
#                                            macrostep::sdk
include(CMakePackageConfigHelpers)

install(TARGETS macrostep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES tools/plot_run.py tools/stability_plot.py
        DESTINATION ${MACROSTEP_INSTALL_TOOLS_DIR})

install(TARGETS macrostep_model macrostep_plugin_api EXPORT macrostepTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT macrostepTargets NAMESPACE macrostep:: DESTINATION ${MACROSTEP_INSTALL_CMAKE_DIR})
configure_package_config_file(cmake/macrostepConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/macrostepConfig.cmake
                              INSTALL_DESTINATION ${MACROSTEP_INSTALL_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
# A plugin's compatibility with a binary is the plugin API version, which the loader checks;
# the package version lets a project ask for the series it was written for: before 1.0 a minor
# version may change the interface, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/macrostepConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/macrostepConfig.cmake
              ${PROJECT_BINARY_DIR}/macrostepConfigVersion.cmake
        DESTINATION ${MACROSTEP_INSTALL_CMAKE_DIR})
