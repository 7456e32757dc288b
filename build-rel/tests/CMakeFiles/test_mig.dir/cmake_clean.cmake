file(REMOVE_RECURSE
  "../bin/test_mig"
  "../bin/test_mig.pdb"
  "CMakeFiles/test_mig.dir/unit/test_mig.c.o"
  "CMakeFiles/test_mig.dir/unit/test_mig.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_mig.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
