# MACROSTEP_GIT_COMMIT: what `git describe --always --dirty` says of the source tree when CMake
# configures it, for `macrostep --version`; "unknown" when the tree is not a git checkout of its
# own (a source archive unpacked inside some other repository must not take that one's commit).
# Configure time, so that a rebuild without a new commit recompiles nothing: the value is that of
# the last configuration (`cmake --preset release` refreshes it; tools/test configures every run).
set(MACROSTEP_GIT_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _macrostep_git_top OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _macrostep_git_status ERROR_QUIET)
  file(REAL_PATH "${PROJECT_SOURCE_DIR}" _macrostep_source_dir)
  if(_macrostep_git_status EQUAL 0 AND EXISTS "${_macrostep_git_top}")
    file(REAL_PATH "${_macrostep_git_top}" _macrostep_git_top)
  endif()
  if(_macrostep_git_status EQUAL 0 AND _macrostep_git_top STREQUAL _macrostep_source_dir)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE _macrostep_git_describe OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _macrostep_git_status ERROR_QUIET)
    if(_macrostep_git_status EQUAL 0 AND NOT _macrostep_git_describe STREQUAL "")
      set(MACROSTEP_GIT_COMMIT "${_macrostep_git_describe}")
    endif()
  endif()
endif()
message(STATUS "macrostep ${PROJECT_VERSION}, commit ${MACROSTEP_GIT_COMMIT}")
