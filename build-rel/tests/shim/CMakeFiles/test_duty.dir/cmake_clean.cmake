file(REMOVE_RECURSE
  "../../bin/test_duty"
  "../../bin/test_duty.pdb"
  "CMakeFiles/test_duty.dir/__/__/src/shim/duty.c.o"
  "CMakeFiles/test_duty.dir/__/__/src/shim/duty.c.o.d"
  "CMakeFiles/test_duty.dir/test_duty.c.o"
  "CMakeFiles/test_duty.dir/test_duty.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_duty.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
