
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/agent/cgroup.c" "src/agent/CMakeFiles/gprun.dir/cgroup.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/cgroup.c.o.d"
  "/work/wt-place/src/agent/cmd.c" "src/agent/CMakeFiles/gprun.dir/cmd.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/cmd.c.o.d"
  "/work/wt-place/src/agent/idmap.c" "src/agent/CMakeFiles/gprun.dir/idmap.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/idmap.c.o.d"
  "/work/wt-place/src/agent/logcap.c" "src/agent/CMakeFiles/gprun.dir/logcap.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/logcap.c.o.d"
  "/work/wt-place/src/agent/netns.c" "src/agent/CMakeFiles/gprun.dir/netns.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/netns.c.o.d"
  "/work/wt-place/src/agent/pull.c" "src/agent/CMakeFiles/gprun.dir/pull.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/pull.c.o.d"
  "/work/wt-place/src/agent/replica_dir.c" "src/agent/CMakeFiles/gprun.dir/replica_dir.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/replica_dir.c.o.d"
  "/work/wt-place/src/agent/run_env.c" "src/agent/CMakeFiles/gprun.dir/run_env.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/run_env.c.o.d"
  "/work/wt-place/src/agent/run_spec.c" "src/agent/CMakeFiles/gprun.dir/run_spec.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/run_spec.c.o.d"
  "/work/wt-place/src/agent/runtime.c" "src/agent/CMakeFiles/gprun.dir/runtime.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/runtime.c.o.d"
  "/work/wt-place/src/agent/sandbox.c" "src/agent/CMakeFiles/gprun.dir/sandbox.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/sandbox.c.o.d"
  "/work/wt-place/src/agent/seccomp.c" "src/agent/CMakeFiles/gprun.dir/seccomp.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/seccomp.c.o.d"
  "/work/wt-place/src/agent/sup_podman.c" "src/agent/CMakeFiles/gprun.dir/sup_podman.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/sup_podman.c.o.d"
  "/work/wt-place/src/agent/supervise.c" "src/agent/CMakeFiles/gprun.dir/supervise.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/supervise.c.o.d"
  "/work/wt-place/src/agent/volumes.c" "src/agent/CMakeFiles/gprun.dir/volumes.c.o" "gcc" "src/agent/CMakeFiles/gprun.dir/volumes.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/shim/CMakeFiles/gpshareregion.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/agent/CMakeFiles/gpcdi.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
