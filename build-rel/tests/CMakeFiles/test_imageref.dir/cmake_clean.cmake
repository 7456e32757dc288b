file(REMOVE_RECURSE
  "../bin/test_imageref"
  "../bin/test_imageref.pdb"
  "CMakeFiles/test_imageref.dir/unit/test_imageref.c.o"
  "CMakeFiles/test_imageref.dir/unit/test_imageref.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_imageref.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
