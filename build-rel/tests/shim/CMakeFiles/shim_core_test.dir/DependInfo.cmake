
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/tests/shim/core_test.c" "tests/shim/CMakeFiles/shim_core_test.dir/core_test.c.o" "gcc" "tests/shim/CMakeFiles/shim_core_test.dir/core_test.c.o.d"
  "/work/wt-place/tests/shim/harness.c" "tests/shim/CMakeFiles/shim_core_test.dir/harness.c.o" "gcc" "tests/shim/CMakeFiles/shim_core_test.dir/harness.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/shim/CMakeFiles/gpshareregion.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
