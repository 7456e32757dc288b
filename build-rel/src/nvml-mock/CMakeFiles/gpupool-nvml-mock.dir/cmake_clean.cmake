file(REMOVE_RECURSE
  "../../lib/libgpupool-nvml-mock.pdb"
  "../../lib/libgpupool-nvml-mock.so"
  "CMakeFiles/gpupool-nvml-mock.dir/__/base/error.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/__/base/error.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/__/core/mig.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/__/core/mig.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/__/net/yaml_json.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/__/net/yaml_json.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/api.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/api.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/control.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/control.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/counters.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/counters.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/instances.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/instances.c.o.d"
  "CMakeFiles/gpupool-nvml-mock.dir/inventory.c.o"
  "CMakeFiles/gpupool-nvml-mock.dir/inventory.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpupool-nvml-mock.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
