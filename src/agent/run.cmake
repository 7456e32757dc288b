# gpupool-run, the per-replica supervisor (included by src/agent/CMakeLists.txt).
#
# libgprun: the supervisor without main(): the state-directory contract (replica_dir.c, which
# gpupool-agent links to re-attach), the spec and environment, cgroups, capped logs, supervision,
# the podman sandbox (its command line, the runtime's detection, image pulls).
find_package(PkgConfig REQUIRED)
add_library(gprun STATIC
    ${CMAKE_CURRENT_LIST_DIR}/replica_dir.c
    ${CMAKE_CURRENT_LIST_DIR}/run_spec.c
    ${CMAKE_CURRENT_LIST_DIR}/run_env.c
    ${CMAKE_CURRENT_LIST_DIR}/cgroup.c
    ${CMAKE_CURRENT_LIST_DIR}/logcap.c
    ${CMAKE_CURRENT_LIST_DIR}/supervise.c
    ${CMAKE_CURRENT_LIST_DIR}/volumes.c
    ${CMAKE_CURRENT_LIST_DIR}/cmd.c
    ${CMAKE_CURRENT_LIST_DIR}/sandbox.c
    ${CMAKE_CURRENT_LIST_DIR}/idmap.c
    ${CMAKE_CURRENT_LIST_DIR}/seccomp.c
    ${CMAKE_CURRENT_LIST_DIR}/runtime.c
    ${CMAKE_CURRENT_LIST_DIR}/netns.c
    ${CMAKE_CURRENT_LIST_DIR}/pull.c
    ${CMAKE_CURRENT_LIST_DIR}/sup_podman.c
)
target_link_libraries(gprun PUBLIC gpbase gpshareregion gp_jansson)

add_executable(gpupool-run ${CMAKE_CURRENT_LIST_DIR}/run_main.c)
target_compile_definitions(gpupool-run PRIVATE GP_VERSION="${PROJECT_VERSION}")
target_link_libraries(gpupool-run PRIVATE gprun)
