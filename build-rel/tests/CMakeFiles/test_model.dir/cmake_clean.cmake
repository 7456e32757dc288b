file(REMOVE_RECURSE
  "../bin/test_model"
  "../bin/test_model.pdb"
  "CMakeFiles/test_model.dir/unit/test_model.c.o"
  "CMakeFiles/test_model.dir/unit/test_model.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_model.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
