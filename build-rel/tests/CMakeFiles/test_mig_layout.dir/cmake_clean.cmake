file(REMOVE_RECURSE
  "../bin/test_mig_layout"
  "../bin/test_mig_layout.pdb"
  "CMakeFiles/test_mig_layout.dir/unit/test_mig_layout.c.o"
  "CMakeFiles/test_mig_layout.dir/unit/test_mig_layout.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_mig_layout.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
