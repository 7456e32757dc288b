file(REMOVE_RECURSE
  "../bin/test_supervise"
  "../bin/test_supervise.pdb"
  "CMakeFiles/test_supervise.dir/unit/test_supervise.c.o"
  "CMakeFiles/test_supervise.dir/unit/test_supervise.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_supervise.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
