file(REMOVE_RECURSE
  "../../lib/libgprun.a"
  "../../lib/libgprun.pdb"
  "CMakeFiles/gprun.dir/cgroup.c.o"
  "CMakeFiles/gprun.dir/cgroup.c.o.d"
  "CMakeFiles/gprun.dir/cmd.c.o"
  "CMakeFiles/gprun.dir/cmd.c.o.d"
  "CMakeFiles/gprun.dir/idmap.c.o"
  "CMakeFiles/gprun.dir/idmap.c.o.d"
  "CMakeFiles/gprun.dir/logcap.c.o"
  "CMakeFiles/gprun.dir/logcap.c.o.d"
  "CMakeFiles/gprun.dir/netns.c.o"
  "CMakeFiles/gprun.dir/netns.c.o.d"
  "CMakeFiles/gprun.dir/pull.c.o"
  "CMakeFiles/gprun.dir/pull.c.o.d"
  "CMakeFiles/gprun.dir/replica_dir.c.o"
  "CMakeFiles/gprun.dir/replica_dir.c.o.d"
  "CMakeFiles/gprun.dir/run_env.c.o"
  "CMakeFiles/gprun.dir/run_env.c.o.d"
  "CMakeFiles/gprun.dir/run_spec.c.o"
  "CMakeFiles/gprun.dir/run_spec.c.o.d"
  "CMakeFiles/gprun.dir/runtime.c.o"
  "CMakeFiles/gprun.dir/runtime.c.o.d"
  "CMakeFiles/gprun.dir/sandbox.c.o"
  "CMakeFiles/gprun.dir/sandbox.c.o.d"
  "CMakeFiles/gprun.dir/seccomp.c.o"
  "CMakeFiles/gprun.dir/seccomp.c.o.d"
  "CMakeFiles/gprun.dir/sup_podman.c.o"
  "CMakeFiles/gprun.dir/sup_podman.c.o.d"
  "CMakeFiles/gprun.dir/supervise.c.o"
  "CMakeFiles/gprun.dir/supervise.c.o.d"
  "CMakeFiles/gprun.dir/volumes.c.o"
  "CMakeFiles/gprun.dir/volumes.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gprun.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
