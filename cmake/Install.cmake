# `cmake --install BUILD --prefix P`: what a user runs, and nothing else (no tests, benchmarks
# or internal libraries):
#   P/bin/macrostep                          the command line
#   P/share/macrostep/*.py                   the scripts it runs (`plot`, `stability`), found
#                                            from bin/ through a relative path (runtime/app)
install(TARGETS macrostep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES tools/plot_run.py tools/stability_plot.py
        DESTINATION ${MACROSTEP_INSTALL_TOOLS_DIR})
