file(REMOVE_RECURSE
  "../../lib/libgperror.a"
  "../../lib/libgperror.pdb"
  "CMakeFiles/gperror.dir/error.c.o"
  "CMakeFiles/gperror.dir/error.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gperror.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
