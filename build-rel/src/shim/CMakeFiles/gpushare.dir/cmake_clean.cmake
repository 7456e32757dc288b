file(REMOVE_RECURSE
  "../../lib/libgpushare.pdb"
  "../../lib/libgpushare.so"
  "CMakeFiles/gpushare.dir/__/base/procstat.c.o"
  "CMakeFiles/gpushare.dir/__/base/procstat.c.o.d"
  "CMakeFiles/gpushare.dir/acct.c.o"
  "CMakeFiles/gpushare.dir/acct.c.o.d"
  "CMakeFiles/gpushare.dir/config.c.o"
  "CMakeFiles/gpushare.dir/config.c.o.d"
  "CMakeFiles/gpushare.dir/dlsym.c.o"
  "CMakeFiles/gpushare.dir/dlsym.c.o.d"
  "CMakeFiles/gpushare.dir/duty.c.o"
  "CMakeFiles/gpushare.dir/duty.c.o.d"
  "CMakeFiles/gpushare.dir/elfsym.c.o"
  "CMakeFiles/gpushare.dir/elfsym.c.o.d"
  "CMakeFiles/gpushare.dir/hooks_info.c.o"
  "CMakeFiles/gpushare.dir/hooks_info.c.o.d"
  "CMakeFiles/gpushare.dir/hooks_launch.c.o"
  "CMakeFiles/gpushare.dir/hooks_launch.c.o.d"
  "CMakeFiles/gpushare.dir/hooks_mem.c.o"
  "CMakeFiles/gpushare.dir/hooks_mem.c.o.d"
  "CMakeFiles/gpushare.dir/region.c.o"
  "CMakeFiles/gpushare.dir/region.c.o.d"
  "CMakeFiles/gpushare.dir/shim.c.o"
  "CMakeFiles/gpushare.dir/shim.c.o.d"
  "CMakeFiles/gpushare.dir/throttle.c.o"
  "CMakeFiles/gpushare.dir/throttle.c.o.d"
  "CMakeFiles/gpushare.dir/throttle_sampler.c.o"
  "CMakeFiles/gpushare.dir/throttle_sampler.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpushare.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
