file(REMOVE_RECURSE
  "../../bin/gpupoold-config-doc"
  "../../bin/gpupoold-config-doc.pdb"
  "CMakeFiles/gpupoold-config-doc.dir/config_doc_main.c.o"
  "CMakeFiles/gpupoold-config-doc.dir/config_doc_main.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpupoold-config-doc.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
