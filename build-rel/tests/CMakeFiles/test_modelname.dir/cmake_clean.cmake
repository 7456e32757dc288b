file(REMOVE_RECURSE
  "../bin/test_modelname"
  "../bin/test_modelname.pdb"
  "CMakeFiles/test_modelname.dir/unit/test_modelname.c.o"
  "CMakeFiles/test_modelname.dir/unit/test_modelname.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_modelname.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
