file(REMOVE_RECURSE
  "../bin/test_openapi"
  "../bin/test_openapi.pdb"
  "CMakeFiles/test_openapi.dir/unit/test_openapi.c.o"
  "CMakeFiles/test_openapi.dir/unit/test_openapi.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_openapi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
