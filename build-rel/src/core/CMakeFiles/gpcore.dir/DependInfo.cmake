
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/core/alloc.c" "src/core/CMakeFiles/gpcore.dir/alloc.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/alloc.c.o.d"
  "/work/wt-place/src/core/autoscale.c" "src/core/CMakeFiles/gpcore.dir/autoscale.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/autoscale.c.o.d"
  "/work/wt-place/src/core/cluster.c" "src/core/CMakeFiles/gpcore.dir/cluster.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/cluster.c.o.d"
  "/work/wt-place/src/core/constraint.c" "src/core/CMakeFiles/gpcore.dir/constraint.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/constraint.c.o.d"
  "/work/wt-place/src/core/feasible.c" "src/core/CMakeFiles/gpcore.dir/feasible.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/feasible.c.o.d"
  "/work/wt-place/src/core/frag.c" "src/core/CMakeFiles/gpcore.dir/frag.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/frag.c.o.d"
  "/work/wt-place/src/core/history.c" "src/core/CMakeFiles/gpcore.dir/history.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/history.c.o.d"
  "/work/wt-place/src/core/imageref.c" "src/core/CMakeFiles/gpcore.dir/imageref.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/imageref.c.o.d"
  "/work/wt-place/src/core/meter.c" "src/core/CMakeFiles/gpcore.dir/meter.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/meter.c.o.d"
  "/work/wt-place/src/core/mig.c" "src/core/CMakeFiles/gpcore.dir/mig.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/mig.c.o.d"
  "/work/wt-place/src/core/mig_place.c" "src/core/CMakeFiles/gpcore.dir/mig_place.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/mig_place.c.o.d"
  "/work/wt-place/src/core/modelname.c" "src/core/CMakeFiles/gpcore.dir/modelname.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/modelname.c.o.d"
  "/work/wt-place/src/core/placer.c" "src/core/CMakeFiles/gpcore.dir/placer.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/placer.c.o.d"
  "/work/wt-place/src/core/policy.c" "src/core/CMakeFiles/gpcore.dir/policy.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/policy.c.o.d"
  "/work/wt-place/src/core/policy_baseline.c" "src/core/CMakeFiles/gpcore.dir/policy_baseline.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/policy_baseline.c.o.d"
  "/work/wt-place/src/core/policy_fgd.c" "src/core/CMakeFiles/gpcore.dir/policy_fgd.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/policy_fgd.c.o.d"
  "/work/wt-place/src/core/policy_sched.c" "src/core/CMakeFiles/gpcore.dir/policy_sched.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/policy_sched.c.o.d"
  "/work/wt-place/src/core/sched.c" "src/core/CMakeFiles/gpcore.dir/sched.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched.c.o.d"
  "/work/wt-place/src/core/sched_backfill.c" "src/core/CMakeFiles/gpcore.dir/sched_backfill.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_backfill.c.o.d"
  "/work/wt-place/src/core/sched_constraint.c" "src/core/CMakeFiles/gpcore.dir/sched_constraint.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_constraint.c.o.d"
  "/work/wt-place/src/core/sched_fail.c" "src/core/CMakeFiles/gpcore.dir/sched_fail.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_fail.c.o.d"
  "/work/wt-place/src/core/sched_limits.c" "src/core/CMakeFiles/gpcore.dir/sched_limits.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_limits.c.o.d"
  "/work/wt-place/src/core/sched_maint.c" "src/core/CMakeFiles/gpcore.dir/sched_maint.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_maint.c.o.d"
  "/work/wt-place/src/core/sched_never.c" "src/core/CMakeFiles/gpcore.dir/sched_never.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_never.c.o.d"
  "/work/wt-place/src/core/sched_place.c" "src/core/CMakeFiles/gpcore.dir/sched_place.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_place.c.o.d"
  "/work/wt-place/src/core/sched_preempt.c" "src/core/CMakeFiles/gpcore.dir/sched_preempt.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/sched_preempt.c.o.d"
  "/work/wt-place/src/core/selector.c" "src/core/CMakeFiles/gpcore.dir/selector.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/selector.c.o.d"
  "/work/wt-place/src/core/topology.c" "src/core/CMakeFiles/gpcore.dir/topology.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/topology.c.o.d"
  "/work/wt-place/src/core/u64map.c" "src/core/CMakeFiles/gpcore.dir/u64map.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/u64map.c.o.d"
  "/work/wt-place/src/core/workload.c" "src/core/CMakeFiles/gpcore.dir/workload.c.o" "gcc" "src/core/CMakeFiles/gpcore.dir/workload.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
