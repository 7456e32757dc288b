file(REMOVE_RECURSE
  "../../bin/gpupool-agent"
  "../../bin/gpupool-agent.pdb"
  "CMakeFiles/gpupool-agent.dir/agent_main.c.o"
  "CMakeFiles/gpupool-agent.dir/agent_main.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpupool-agent.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
