file(REMOVE_RECURSE
  "../../lib/libgpctlconfig.a"
  "../../lib/libgpctlconfig.pdb"
  "CMakeFiles/gpctlconfig.dir/config.c.o"
  "CMakeFiles/gpctlconfig.dir/config.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpctlconfig.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
