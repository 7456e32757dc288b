file(REMOVE_RECURSE
  "../bin/test_textfile"
  "../bin/test_textfile.pdb"
  "CMakeFiles/test_textfile.dir/unit/test_textfile.c.o"
  "CMakeFiles/test_textfile.dir/unit/test_textfile.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_textfile.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
