file(REMOVE_RECURSE
  "../bin/test_sched"
  "../bin/test_sched.pdb"
  "CMakeFiles/test_sched.dir/unit/test_sched.c.o"
  "CMakeFiles/test_sched.dir/unit/test_sched.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_sched.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
