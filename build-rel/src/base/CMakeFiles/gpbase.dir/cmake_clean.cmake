file(REMOVE_RECURSE
  "../../lib/libgpbase.a"
  "../../lib/libgpbase.pdb"
  "CMakeFiles/gpbase.dir/clock.c.o"
  "CMakeFiles/gpbase.dir/clock.c.o.d"
  "CMakeFiles/gpbase.dir/envname.c.o"
  "CMakeFiles/gpbase.dir/envname.c.o.d"
  "CMakeFiles/gpbase.dir/log.c.o"
  "CMakeFiles/gpbase.dir/log.c.o.d"
  "CMakeFiles/gpbase.dir/textfile.c.o"
  "CMakeFiles/gpbase.dir/textfile.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpbase.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
