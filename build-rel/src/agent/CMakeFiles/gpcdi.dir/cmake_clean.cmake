file(REMOVE_RECURSE
  "../../lib/libgpcdi.a"
  "../../lib/libgpcdi.pdb"
  "CMakeFiles/gpcdi.dir/cdi.c.o"
  "CMakeFiles/gpcdi.dir/cdi.c.o.d"
  "CMakeFiles/gpcdi.dir/cdi_driver.c.o"
  "CMakeFiles/gpcdi.dir/cdi_driver.c.o.d"
  "CMakeFiles/gpcdi.dir/cdi_podman.c.o"
  "CMakeFiles/gpcdi.dir/cdi_podman.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpcdi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
