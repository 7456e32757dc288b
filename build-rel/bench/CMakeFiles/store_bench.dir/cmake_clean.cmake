file(REMOVE_RECURSE
  "../bin/store_bench"
  "../bin/store_bench.pdb"
  "CMakeFiles/store_bench.dir/store_bench.c.o"
  "CMakeFiles/store_bench.dir/store_bench.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/store_bench.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
