file(REMOVE_RECURSE
  "../bin/placement_bench"
  "../bin/placement_bench.pdb"
  "CMakeFiles/placement_bench.dir/placement_bench.c.o"
  "CMakeFiles/placement_bench.dir/placement_bench.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/placement_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
