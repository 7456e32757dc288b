file(REMOVE_RECURSE
  "../bin/ctl_bench"
  "../bin/ctl_bench.pdb"
  "CMakeFiles/ctl_bench.dir/ctl_bench.c.o"
  "CMakeFiles/ctl_bench.dir/ctl_bench.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ctl_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
