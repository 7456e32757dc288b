file(REMOVE_RECURSE
  "CMakeFiles/gpattack.dir/attack_lib.c.o"
  "CMakeFiles/gpattack.dir/attack_lib.c.o.d"
  "fake/libgpattack.pdb"
  "fake/libgpattack.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpattack.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
