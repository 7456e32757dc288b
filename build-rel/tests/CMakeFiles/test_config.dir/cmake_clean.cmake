file(REMOVE_RECURSE
  "../bin/test_config"
  "../bin/test_config.pdb"
  "CMakeFiles/test_config.dir/unit/test_config.c.o"
  "CMakeFiles/test_config.dir/unit/test_config.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_config.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
