file(REMOVE_RECURSE
  "../bin/test_ctl_history"
  "../bin/test_ctl_history.pdb"
  "CMakeFiles/test_ctl_history.dir/unit/test_ctl_history.c.o"
  "CMakeFiles/test_ctl_history.dir/unit/test_ctl_history.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ctl_history.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
