
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/net/http_accept.c" "src/net/CMakeFiles/gpnet.dir/http_accept.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/http_accept.c.o.d"
  "/work/wt-place/src/net/http_client.c" "src/net/CMakeFiles/gpnet.dir/http_client.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/http_client.c.o.d"
  "/work/wt-place/src/net/http_server.c" "src/net/CMakeFiles/gpnet.dir/http_server.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/http_server.c.o.d"
  "/work/wt-place/src/net/http_stream.c" "src/net/CMakeFiles/gpnet.dir/http_stream.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/http_stream.c.o.d"
  "/work/wt-place/src/net/jobspec.c" "src/net/CMakeFiles/gpnet.dir/jobspec.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/jobspec.c.o.d"
  "/work/wt-place/src/net/jobspec_place.c" "src/net/CMakeFiles/gpnet.dir/jobspec_place.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/jobspec_place.c.o.d"
  "/work/wt-place/src/net/jobspec_serve.c" "src/net/CMakeFiles/gpnet.dir/jobspec_serve.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/jobspec_serve.c.o.d"
  "/work/wt-place/src/net/prom.c" "src/net/CMakeFiles/gpnet.dir/prom.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/prom.c.o.d"
  "/work/wt-place/src/net/prom_read.c" "src/net/CMakeFiles/gpnet.dir/prom_read.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/prom_read.c.o.d"
  "/work/wt-place/src/net/relay.c" "src/net/CMakeFiles/gpnet.dir/relay.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/relay.c.o.d"
  "/work/wt-place/src/net/seal.c" "src/net/CMakeFiles/gpnet.dir/seal.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/seal.c.o.d"
  "/work/wt-place/src/net/servers.c" "src/net/CMakeFiles/gpnet.dir/servers.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/servers.c.o.d"
  "/work/wt-place/src/net/token.c" "src/net/CMakeFiles/gpnet.dir/token.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/token.c.o.d"
  "/work/wt-place/src/net/wire.c" "src/net/CMakeFiles/gpnet.dir/wire.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/wire.c.o.d"
  "/work/wt-place/src/net/wire_desired.c" "src/net/CMakeFiles/gpnet.dir/wire_desired.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/wire_desired.c.o.d"
  "/work/wt-place/src/net/wire_node.c" "src/net/CMakeFiles/gpnet.dir/wire_node.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/wire_node.c.o.d"
  "/work/wt-place/src/net/wire_read.c" "src/net/CMakeFiles/gpnet.dir/wire_read.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/wire_read.c.o.d"
  "/work/wt-place/src/net/yaml_json.c" "src/net/CMakeFiles/gpnet.dir/yaml_json.c.o" "gcc" "src/net/CMakeFiles/gpnet.dir/yaml_json.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
