file(REMOVE_RECURSE
  "../bin/test_meter"
  "../bin/test_meter.pdb"
  "CMakeFiles/test_meter.dir/unit/test_meter.c.o"
  "CMakeFiles/test_meter.dir/unit/test_meter.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_meter.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
