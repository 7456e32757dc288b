file(REMOVE_RECURSE
  "../bin/test_agent_metrics"
  "../bin/test_agent_metrics.pdb"
  "CMakeFiles/test_agent_metrics.dir/unit/test_agent_metrics.c.o"
  "CMakeFiles/test_agent_metrics.dir/unit/test_agent_metrics.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_agent_metrics.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
