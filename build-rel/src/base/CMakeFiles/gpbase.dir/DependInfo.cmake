
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/base/clock.c" "src/base/CMakeFiles/gpbase.dir/clock.c.o" "gcc" "src/base/CMakeFiles/gpbase.dir/clock.c.o.d"
  "/work/wt-place/src/base/envname.c" "src/base/CMakeFiles/gpbase.dir/envname.c.o" "gcc" "src/base/CMakeFiles/gpbase.dir/envname.c.o.d"
  "/work/wt-place/src/base/log.c" "src/base/CMakeFiles/gpbase.dir/log.c.o" "gcc" "src/base/CMakeFiles/gpbase.dir/log.c.o.d"
  "/work/wt-place/src/base/textfile.c" "src/base/CMakeFiles/gpbase.dir/textfile.c.o" "gcc" "src/base/CMakeFiles/gpbase.dir/textfile.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
