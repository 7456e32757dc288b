file(REMOVE_RECURSE
  "../../bin/test_region"
  "../../bin/test_region.pdb"
  "CMakeFiles/test_region.dir/test_region.c.o"
  "CMakeFiles/test_region.dir/test_region.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_region.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
