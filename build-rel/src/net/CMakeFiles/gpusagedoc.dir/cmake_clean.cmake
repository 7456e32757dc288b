file(REMOVE_RECURSE
  "../../lib/libgpusagedoc.a"
  "../../lib/libgpusagedoc.pdb"
  "CMakeFiles/gpusagedoc.dir/usage_doc.c.o"
  "CMakeFiles/gpusagedoc.dir/usage_doc.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpusagedoc.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
