
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/base/error.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/base/error.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/base/error.c.o.d"
  "/work/wt-place/src/core/mig.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/core/mig.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/core/mig.c.o.d"
  "/work/wt-place/src/net/yaml_json.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/net/yaml_json.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/__/net/yaml_json.c.o.d"
  "/work/wt-place/src/nvml-mock/api.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/api.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/api.c.o.d"
  "/work/wt-place/src/nvml-mock/control.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/control.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/control.c.o.d"
  "/work/wt-place/src/nvml-mock/counters.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/counters.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/counters.c.o.d"
  "/work/wt-place/src/nvml-mock/instances.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/instances.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/instances.c.o.d"
  "/work/wt-place/src/nvml-mock/inventory.c" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/inventory.c.o" "gcc" "src/nvml-mock/CMakeFiles/gpupool-nvml-mock.dir/inventory.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
