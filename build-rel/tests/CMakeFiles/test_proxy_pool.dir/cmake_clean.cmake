file(REMOVE_RECURSE
  "../bin/test_proxy_pool"
  "../bin/test_proxy_pool.pdb"
  "CMakeFiles/test_proxy_pool.dir/unit/test_proxy_pool.c.o"
  "CMakeFiles/test_proxy_pool.dir/unit/test_proxy_pool.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_proxy_pool.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
