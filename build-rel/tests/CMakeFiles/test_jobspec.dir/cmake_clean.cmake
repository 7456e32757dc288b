file(REMOVE_RECURSE
  "../bin/test_jobspec"
  "../bin/test_jobspec.pdb"
  "CMakeFiles/test_jobspec.dir/unit/test_jobspec.c.o"
  "CMakeFiles/test_jobspec.dir/unit/test_jobspec.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_jobspec.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
