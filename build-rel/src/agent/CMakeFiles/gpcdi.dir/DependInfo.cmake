
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/agent/cdi.c" "src/agent/CMakeFiles/gpcdi.dir/cdi.c.o" "gcc" "src/agent/CMakeFiles/gpcdi.dir/cdi.c.o.d"
  "/work/wt-place/src/agent/cdi_driver.c" "src/agent/CMakeFiles/gpcdi.dir/cdi_driver.c.o" "gcc" "src/agent/CMakeFiles/gpcdi.dir/cdi_driver.c.o.d"
  "/work/wt-place/src/agent/cdi_podman.c" "src/agent/CMakeFiles/gpcdi.dir/cdi_podman.c.o" "gcc" "src/agent/CMakeFiles/gpcdi.dir/cdi_podman.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
