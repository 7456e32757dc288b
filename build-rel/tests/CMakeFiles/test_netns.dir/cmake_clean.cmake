file(REMOVE_RECURSE
  "../bin/test_netns"
  "../bin/test_netns.pdb"
  "CMakeFiles/test_netns.dir/unit/test_netns.c.o"
  "CMakeFiles/test_netns.dir/unit/test_netns.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_netns.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
