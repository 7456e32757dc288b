file(REMOVE_RECURSE
  "../bin/test_jobspec_serve"
  "../bin/test_jobspec_serve.pdb"
  "CMakeFiles/test_jobspec_serve.dir/unit/test_jobspec_serve.c.o"
  "CMakeFiles/test_jobspec_serve.dir/unit/test_jobspec_serve.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_jobspec_serve.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
