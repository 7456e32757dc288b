file(REMOVE_RECURSE
  "../../lib/libgpshareregion.a"
  "../../lib/libgpshareregion.pdb"
  "CMakeFiles/gpshareregion.dir/region.c.o"
  "CMakeFiles/gpshareregion.dir/region.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpshareregion.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
