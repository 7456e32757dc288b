file(REMOVE_RECURSE
  "../../lib/libgpsim.a"
  "../../lib/libgpsim.pdb"
  "CMakeFiles/gpsim.dir/replay.c.o"
  "CMakeFiles/gpsim.dir/replay.c.o.d"
  "CMakeFiles/gpsim.dir/report.c.o"
  "CMakeFiles/gpsim.dir/report.c.o.d"
  "CMakeFiles/gpsim.dir/svg.c.o"
  "CMakeFiles/gpsim.dir/svg.c.o.d"
  "CMakeFiles/gpsim.dir/trace.c.o"
  "CMakeFiles/gpsim.dir/trace.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpsim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
