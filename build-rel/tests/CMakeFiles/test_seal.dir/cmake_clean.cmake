file(REMOVE_RECURSE
  "../bin/test_seal"
  "../bin/test_seal.pdb"
  "CMakeFiles/test_seal.dir/unit/test_seal.c.o"
  "CMakeFiles/test_seal.dir/unit/test_seal.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_seal.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
