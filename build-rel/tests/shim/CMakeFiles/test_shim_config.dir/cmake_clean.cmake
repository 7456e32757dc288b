file(REMOVE_RECURSE
  "../../bin/test_shim_config"
  "../../bin/test_shim_config.pdb"
  "CMakeFiles/test_shim_config.dir/__/__/src/shim/config.c.o"
  "CMakeFiles/test_shim_config.dir/__/__/src/shim/config.c.o.d"
  "CMakeFiles/test_shim_config.dir/test_shim_config.c.o"
  "CMakeFiles/test_shim_config.dir/test_shim_config.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_shim_config.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
