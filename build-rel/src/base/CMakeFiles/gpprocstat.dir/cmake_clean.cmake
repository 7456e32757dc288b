file(REMOVE_RECURSE
  "../../lib/libgpprocstat.a"
  "../../lib/libgpprocstat.pdb"
  "CMakeFiles/gpprocstat.dir/procstat.c.o"
  "CMakeFiles/gpprocstat.dir/procstat.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpprocstat.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
