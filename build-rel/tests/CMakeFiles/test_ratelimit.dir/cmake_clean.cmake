file(REMOVE_RECURSE
  "../bin/test_ratelimit"
  "../bin/test_ratelimit.pdb"
  "CMakeFiles/test_ratelimit.dir/__/src/ctl/ratelimit.c.o"
  "CMakeFiles/test_ratelimit.dir/__/src/ctl/ratelimit.c.o.d"
  "CMakeFiles/test_ratelimit.dir/unit/test_ratelimit.c.o"
  "CMakeFiles/test_ratelimit.dir/unit/test_ratelimit.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ratelimit.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
