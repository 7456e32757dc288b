
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/tests/unit/test_ctl_history.c" "tests/CMakeFiles/test_ctl_history.dir/unit/test_ctl_history.c.o" "gcc" "tests/CMakeFiles/test_ctl_history.dir/unit/test_ctl_history.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/sim/CMakeFiles/gpsim.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpnet.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/store/CMakeFiles/gpstore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/ctl/CMakeFiles/gpctl.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/ctl/CMakeFiles/gpctlconfig.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpusagedoc.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
