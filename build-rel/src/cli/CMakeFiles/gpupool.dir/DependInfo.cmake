
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/cli/args.c" "src/cli/CMakeFiles/gpupool.dir/args.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/args.c.o.d"
  "/work/wt-place/src/cli/client.c" "src/cli/CMakeFiles/gpupool.dir/client.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/client.c.o.d"
  "/work/wt-place/src/cli/cmd_audit.c" "src/cli/CMakeFiles/gpupool.dir/cmd_audit.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_audit.c.o.d"
  "/work/wt-place/src/cli/cmd_cancel.c" "src/cli/CMakeFiles/gpupool.dir/cmd_cancel.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_cancel.c.o.d"
  "/work/wt-place/src/cli/cmd_describe.c" "src/cli/CMakeFiles/gpupool.dir/cmd_describe.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_describe.c.o.d"
  "/work/wt-place/src/cli/cmd_get.c" "src/cli/CMakeFiles/gpupool.dir/cmd_get.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_get.c.o.d"
  "/work/wt-place/src/cli/cmd_login.c" "src/cli/CMakeFiles/gpupool.dir/cmd_login.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_login.c.o.d"
  "/work/wt-place/src/cli/cmd_logs.c" "src/cli/CMakeFiles/gpupool.dir/cmd_logs.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_logs.c.o.d"
  "/work/wt-place/src/cli/cmd_nodes.c" "src/cli/CMakeFiles/gpupool.dir/cmd_nodes.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_nodes.c.o.d"
  "/work/wt-place/src/cli/cmd_notebook.c" "src/cli/CMakeFiles/gpupool.dir/cmd_notebook.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_notebook.c.o.d"
  "/work/wt-place/src/cli/cmd_pclass.c" "src/cli/CMakeFiles/gpupool.dir/cmd_pclass.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_pclass.c.o.d"
  "/work/wt-place/src/cli/cmd_queue.c" "src/cli/CMakeFiles/gpupool.dir/cmd_queue.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_queue.c.o.d"
  "/work/wt-place/src/cli/cmd_registry.c" "src/cli/CMakeFiles/gpupool.dir/cmd_registry.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_registry.c.o.d"
  "/work/wt-place/src/cli/cmd_sim.c" "src/cli/CMakeFiles/gpupool.dir/cmd_sim.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_sim.c.o.d"
  "/work/wt-place/src/cli/cmd_submit.c" "src/cli/CMakeFiles/gpupool.dir/cmd_submit.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_submit.c.o.d"
  "/work/wt-place/src/cli/cmd_taint.c" "src/cli/CMakeFiles/gpupool.dir/cmd_taint.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_taint.c.o.d"
  "/work/wt-place/src/cli/cmd_tenant.c" "src/cli/CMakeFiles/gpupool.dir/cmd_tenant.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_tenant.c.o.d"
  "/work/wt-place/src/cli/cmd_token.c" "src/cli/CMakeFiles/gpupool.dir/cmd_token.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_token.c.o.d"
  "/work/wt-place/src/cli/cmd_up.c" "src/cli/CMakeFiles/gpupool.dir/cmd_up.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_up.c.o.d"
  "/work/wt-place/src/cli/cmd_usage.c" "src/cli/CMakeFiles/gpupool.dir/cmd_usage.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_usage.c.o.d"
  "/work/wt-place/src/cli/cmd_volume.c" "src/cli/CMakeFiles/gpupool.dir/cmd_volume.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/cmd_volume.c.o.d"
  "/work/wt-place/src/cli/jobname.c" "src/cli/CMakeFiles/gpupool.dir/jobname.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/jobname.c.o.d"
  "/work/wt-place/src/cli/main.c" "src/cli/CMakeFiles/gpupool.dir/main.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/main.c.o.d"
  "/work/wt-place/src/cli/object.c" "src/cli/CMakeFiles/gpupool.dir/object.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/object.c.o.d"
  "/work/wt-place/src/cli/output.c" "src/cli/CMakeFiles/gpupool.dir/output.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/output.c.o.d"
  "/work/wt-place/src/cli/pool_procs.c" "src/cli/CMakeFiles/gpupool.dir/pool_procs.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/pool_procs.c.o.d"
  "/work/wt-place/src/cli/resource.c" "src/cli/CMakeFiles/gpupool.dir/resource.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/resource.c.o.d"
  "/work/wt-place/src/cli/secretfile.c" "src/cli/CMakeFiles/gpupool.dir/secretfile.c.o" "gcc" "src/cli/CMakeFiles/gpupool.dir/secretfile.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/sim/CMakeFiles/gpsim.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpnet.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpusagedoc.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
