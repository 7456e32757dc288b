file(REMOVE_RECURSE
  "../bin/test_sched_constraint"
  "../bin/test_sched_constraint.pdb"
  "CMakeFiles/test_sched_constraint.dir/unit/test_sched_constraint.c.o"
  "CMakeFiles/test_sched_constraint.dir/unit/test_sched_constraint.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_sched_constraint.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
