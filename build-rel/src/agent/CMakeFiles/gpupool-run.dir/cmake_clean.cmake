file(REMOVE_RECURSE
  "../../bin/gpupool-run"
  "../../bin/gpupool-run.pdb"
  "CMakeFiles/gpupool-run.dir/run_main.c.o"
  "CMakeFiles/gpupool-run.dir/run_main.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpupool-run.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
