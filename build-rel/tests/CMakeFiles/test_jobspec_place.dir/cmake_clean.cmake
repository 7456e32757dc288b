file(REMOVE_RECURSE
  "../bin/test_jobspec_place"
  "../bin/test_jobspec_place.pdb"
  "CMakeFiles/test_jobspec_place.dir/unit/test_jobspec_place.c.o"
  "CMakeFiles/test_jobspec_place.dir/unit/test_jobspec_place.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_jobspec_place.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
