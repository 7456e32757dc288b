
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/sim/replay.c" "src/sim/CMakeFiles/gpsim.dir/replay.c.o" "gcc" "src/sim/CMakeFiles/gpsim.dir/replay.c.o.d"
  "/work/wt-place/src/sim/report.c" "src/sim/CMakeFiles/gpsim.dir/report.c.o" "gcc" "src/sim/CMakeFiles/gpsim.dir/report.c.o.d"
  "/work/wt-place/src/sim/svg.c" "src/sim/CMakeFiles/gpsim.dir/svg.c.o" "gcc" "src/sim/CMakeFiles/gpsim.dir/svg.c.o.d"
  "/work/wt-place/src/sim/trace.c" "src/sim/CMakeFiles/gpsim.dir/trace.c.o" "gcc" "src/sim/CMakeFiles/gpsim.dir/trace.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
