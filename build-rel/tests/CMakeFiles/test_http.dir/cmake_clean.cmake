file(REMOVE_RECURSE
  "../bin/test_http"
  "../bin/test_http.pdb"
  "CMakeFiles/test_http.dir/unit/test_http.c.o"
  "CMakeFiles/test_http.dir/unit/test_http.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_http.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
