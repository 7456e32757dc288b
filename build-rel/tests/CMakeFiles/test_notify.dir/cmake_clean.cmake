file(REMOVE_RECURSE
  "../bin/test_notify"
  "../bin/test_notify.pdb"
  "CMakeFiles/test_notify.dir/unit/test_notify.c.o"
  "CMakeFiles/test_notify.dir/unit/test_notify.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_notify.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
