file(REMOVE_RECURSE
  "../bin/test_proxy_http"
  "../bin/test_proxy_http.pdb"
  "CMakeFiles/test_proxy_http.dir/unit/test_proxy_http.c.o"
  "CMakeFiles/test_proxy_http.dir/unit/test_proxy_http.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_proxy_http.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
