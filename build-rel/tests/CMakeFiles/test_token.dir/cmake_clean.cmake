file(REMOVE_RECURSE
  "../bin/test_token"
  "../bin/test_token.pdb"
  "CMakeFiles/test_token.dir/unit/test_token.c.o"
  "CMakeFiles/test_token.dir/unit/test_token.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_token.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
