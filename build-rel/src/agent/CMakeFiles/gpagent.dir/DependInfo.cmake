
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/agent/agent.c" "src/agent/CMakeFiles/gpagent.dir/agent.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/agent.c.o.d"
  "/work/wt-place/src/agent/cdi_host.c" "src/agent/CMakeFiles/gpagent.dir/cdi_host.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/cdi_host.c.o.d"
  "/work/wt-place/src/agent/check.c" "src/agent/CMakeFiles/gpagent.dir/check.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/check.c.o.d"
  "/work/wt-place/src/agent/converge.c" "src/agent/CMakeFiles/gpagent.dir/converge.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/converge.c.o.d"
  "/work/wt-place/src/agent/discover.c" "src/agent/CMakeFiles/gpagent.dir/discover.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/discover.c.o.d"
  "/work/wt-place/src/agent/images.c" "src/agent/CMakeFiles/gpagent.dir/images.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/images.c.o.d"
  "/work/wt-place/src/agent/logserve.c" "src/agent/CMakeFiles/gpagent.dir/logserve.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/logserve.c.o.d"
  "/work/wt-place/src/agent/memwatch.c" "src/agent/CMakeFiles/gpagent.dir/memwatch.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/memwatch.c.o.d"
  "/work/wt-place/src/agent/memwatch_run.c" "src/agent/CMakeFiles/gpagent.dir/memwatch_run.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/memwatch_run.c.o.d"
  "/work/wt-place/src/agent/metrics.c" "src/agent/CMakeFiles/gpagent.dir/metrics.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/metrics.c.o.d"
  "/work/wt-place/src/agent/mig.c" "src/agent/CMakeFiles/gpagent.dir/mig.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/mig.c.o.d"
  "/work/wt-place/src/agent/nvml.c" "src/agent/CMakeFiles/gpagent.dir/nvml.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/nvml.c.o.d"
  "/work/wt-place/src/agent/nvml_sample.c" "src/agent/CMakeFiles/gpagent.dir/nvml_sample.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/nvml_sample.c.o.d"
  "/work/wt-place/src/agent/probe.c" "src/agent/CMakeFiles/gpagent.dir/probe.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/probe.c.o.d"
  "/work/wt-place/src/agent/probe_run.c" "src/agent/CMakeFiles/gpagent.dir/probe_run.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/probe_run.c.o.d"
  "/work/wt-place/src/agent/replicas.c" "src/agent/CMakeFiles/gpagent.dir/replicas.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/replicas.c.o.d"
  "/work/wt-place/src/agent/services.c" "src/agent/CMakeFiles/gpagent.dir/services.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/services.c.o.d"
  "/work/wt-place/src/agent/tunnel.c" "src/agent/CMakeFiles/gpagent.dir/tunnel.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/tunnel.c.o.d"
  "/work/wt-place/src/agent/usage.c" "src/agent/CMakeFiles/gpagent.dir/usage.c.o" "gcc" "src/agent/CMakeFiles/gpagent.dir/usage.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/agent/CMakeFiles/gprun.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/agent/CMakeFiles/gpcdi.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpnet.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/shim/CMakeFiles/gpshareregion.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
