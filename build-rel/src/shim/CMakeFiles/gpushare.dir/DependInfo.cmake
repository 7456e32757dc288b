
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/base/procstat.c" "src/shim/CMakeFiles/gpushare.dir/__/base/procstat.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/__/base/procstat.c.o.d"
  "/work/wt-place/src/shim/acct.c" "src/shim/CMakeFiles/gpushare.dir/acct.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/acct.c.o.d"
  "/work/wt-place/src/shim/config.c" "src/shim/CMakeFiles/gpushare.dir/config.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/config.c.o.d"
  "/work/wt-place/src/shim/dlsym.c" "src/shim/CMakeFiles/gpushare.dir/dlsym.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/dlsym.c.o.d"
  "/work/wt-place/src/shim/duty.c" "src/shim/CMakeFiles/gpushare.dir/duty.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/duty.c.o.d"
  "/work/wt-place/src/shim/elfsym.c" "src/shim/CMakeFiles/gpushare.dir/elfsym.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/elfsym.c.o.d"
  "/work/wt-place/src/shim/hooks_info.c" "src/shim/CMakeFiles/gpushare.dir/hooks_info.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/hooks_info.c.o.d"
  "/work/wt-place/src/shim/hooks_launch.c" "src/shim/CMakeFiles/gpushare.dir/hooks_launch.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/hooks_launch.c.o.d"
  "/work/wt-place/src/shim/hooks_mem.c" "src/shim/CMakeFiles/gpushare.dir/hooks_mem.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/hooks_mem.c.o.d"
  "/work/wt-place/src/shim/region.c" "src/shim/CMakeFiles/gpushare.dir/region.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/region.c.o.d"
  "/work/wt-place/src/shim/shim.c" "src/shim/CMakeFiles/gpushare.dir/shim.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/shim.c.o.d"
  "/work/wt-place/src/shim/throttle.c" "src/shim/CMakeFiles/gpushare.dir/throttle.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/throttle.c.o.d"
  "/work/wt-place/src/shim/throttle_sampler.c" "src/shim/CMakeFiles/gpushare.dir/throttle_sampler.c.o" "gcc" "src/shim/CMakeFiles/gpushare.dir/throttle_sampler.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
