file(REMOVE_RECURSE
  "../bin/test_metrics"
  "../bin/test_metrics.pdb"
  "CMakeFiles/test_metrics.dir/__/src/ctl/faults.c.o"
  "CMakeFiles/test_metrics.dir/__/src/ctl/faults.c.o.d"
  "CMakeFiles/test_metrics.dir/__/src/ctl/metrics.c.o"
  "CMakeFiles/test_metrics.dir/__/src/ctl/metrics.c.o.d"
  "CMakeFiles/test_metrics.dir/unit/test_metrics.c.o"
  "CMakeFiles/test_metrics.dir/unit/test_metrics.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_metrics.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
