file(REMOVE_RECURSE
  "../bin/shim_bench"
  "../bin/shim_bench.pdb"
  "CMakeFiles/shim_bench.dir/shim_bench.c.o"
  "CMakeFiles/shim_bench.dir/shim_bench.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/shim_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
