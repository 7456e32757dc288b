file(REMOVE_RECURSE
  "../bin/test_faults"
  "../bin/test_faults.pdb"
  "CMakeFiles/test_faults.dir/__/src/ctl/faults.c.o"
  "CMakeFiles/test_faults.dir/__/src/ctl/faults.c.o.d"
  "CMakeFiles/test_faults.dir/unit/test_faults.c.o"
  "CMakeFiles/test_faults.dir/unit/test_faults.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_faults.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
