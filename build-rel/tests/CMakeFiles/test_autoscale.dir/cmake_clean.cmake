file(REMOVE_RECURSE
  "../bin/test_autoscale"
  "../bin/test_autoscale.pdb"
  "CMakeFiles/test_autoscale.dir/unit/test_autoscale.c.o"
  "CMakeFiles/test_autoscale.dir/unit/test_autoscale.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_autoscale.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
