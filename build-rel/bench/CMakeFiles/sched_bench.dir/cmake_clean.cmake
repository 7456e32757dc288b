file(REMOVE_RECURSE
  "../bin/sched_bench"
  "../bin/sched_bench.pdb"
  "CMakeFiles/sched_bench.dir/sched_bench.c.o"
  "CMakeFiles/sched_bench.dir/sched_bench.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/sched_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
