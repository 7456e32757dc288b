file(REMOVE_RECURSE
  "../bin/test_http_stream"
  "../bin/test_http_stream.pdb"
  "CMakeFiles/test_http_stream.dir/unit/test_http_stream.c.o"
  "CMakeFiles/test_http_stream.dir/unit/test_http_stream.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_http_stream.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
