file(REMOVE_RECURSE
  "../lib/libnvml-stub.pdb"
  "../lib/libnvml-stub.so"
  "CMakeFiles/nvml-stub.dir/unit/nvml_stub.c.o"
  "CMakeFiles/nvml-stub.dir/unit/nvml_stub.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/nvml-stub.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
