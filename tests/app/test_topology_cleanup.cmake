# `macrostep topology` and `macrostep cleanup` (included from tests/app/CMakeLists.txt).
add_executable(test_topology_cleanup test_topology_cleanup.cpp)
target_link_libraries(test_topology_cleanup PRIVATE macrostep_ipc GTest::gtest_main)
target_compile_definitions(test_topology_cleanup PRIVATE
  MACROSTEP_BINARY="$<TARGET_FILE:macrostep>"
  MACROSTEP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_topology_cleanup macrostep)
# `cleanup` removes every stale segment of this user: not beside the ipc cleanup tests.
gtest_discover_tests(test_topology_cleanup TEST_PREFIX "Topology."
                     PROPERTIES RESOURCE_LOCK macrostep_stale_segments)
