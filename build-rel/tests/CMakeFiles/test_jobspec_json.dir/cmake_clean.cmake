file(REMOVE_RECURSE
  "../bin/test_jobspec_json"
  "../bin/test_jobspec_json.pdb"
  "CMakeFiles/test_jobspec_json.dir/unit/test_jobspec_json.c.o"
  "CMakeFiles/test_jobspec_json.dir/unit/test_jobspec_json.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_jobspec_json.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
