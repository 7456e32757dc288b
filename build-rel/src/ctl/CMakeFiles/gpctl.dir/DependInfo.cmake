
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/ctl/alerts_active.c" "src/ctl/CMakeFiles/gpctl.dir/alerts_active.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/alerts_active.c.o.d"
  "/work/wt-place/src/ctl/api_alerts.c" "src/ctl/CMakeFiles/gpctl.dir/api_alerts.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_alerts.c.o.d"
  "/work/wt-place/src/ctl/api_audit.c" "src/ctl/CMakeFiles/gpctl.dir/api_audit.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_audit.c.o.d"
  "/work/wt-place/src/ctl/api_history.c" "src/ctl/CMakeFiles/gpctl.dir/api_history.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_history.c.o.d"
  "/work/wt-place/src/ctl/api_jobs.c" "src/ctl/CMakeFiles/gpctl.dir/api_jobs.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_jobs.c.o.d"
  "/work/wt-place/src/ctl/api_logs.c" "src/ctl/CMakeFiles/gpctl.dir/api_logs.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_logs.c.o.d"
  "/work/wt-place/src/ctl/api_metrics.c" "src/ctl/CMakeFiles/gpctl.dir/api_metrics.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_metrics.c.o.d"
  "/work/wt-place/src/ctl/api_node_admit.c" "src/ctl/CMakeFiles/gpctl.dir/api_node_admit.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_node_admit.c.o.d"
  "/work/wt-place/src/ctl/api_node_taints.c" "src/ctl/CMakeFiles/gpctl.dir/api_node_taints.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_node_taints.c.o.d"
  "/work/wt-place/src/ctl/api_nodes.c" "src/ctl/CMakeFiles/gpctl.dir/api_nodes.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_nodes.c.o.d"
  "/work/wt-place/src/ctl/api_objects.c" "src/ctl/CMakeFiles/gpctl.dir/api_objects.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_objects.c.o.d"
  "/work/wt-place/src/ctl/api_resume.c" "src/ctl/CMakeFiles/gpctl.dir/api_resume.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_resume.c.o.d"
  "/work/wt-place/src/ctl/api_services.c" "src/ctl/CMakeFiles/gpctl.dir/api_services.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_services.c.o.d"
  "/work/wt-place/src/ctl/api_tokens.c" "src/ctl/CMakeFiles/gpctl.dir/api_tokens.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_tokens.c.o.d"
  "/work/wt-place/src/ctl/api_ui.c" "src/ctl/CMakeFiles/gpctl.dir/api_ui.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_ui.c.o.d"
  "/work/wt-place/src/ctl/api_usage.c" "src/ctl/CMakeFiles/gpctl.dir/api_usage.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/api_usage.c.o.d"
  "/work/wt-place/src/ctl/audit.c" "src/ctl/CMakeFiles/gpctl.dir/audit.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/audit.c.o.d"
  "/work/wt-place/src/ctl/commit.c" "src/ctl/CMakeFiles/gpctl.dir/commit.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/commit.c.o.d"
  "/work/wt-place/src/ctl/datalock.c" "src/ctl/CMakeFiles/gpctl.dir/datalock.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/datalock.c.o.d"
  "/work/wt-place/src/ctl/desired.c" "src/ctl/CMakeFiles/gpctl.dir/desired.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/desired.c.o.d"
  "/work/wt-place/src/ctl/doc.c" "src/ctl/CMakeFiles/gpctl.dir/doc.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/doc.c.o.d"
  "/work/wt-place/src/ctl/faults.c" "src/ctl/CMakeFiles/gpctl.dir/faults.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/faults.c.o.d"
  "/work/wt-place/src/ctl/ha.c" "src/ctl/CMakeFiles/gpctl.dir/ha.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/ha.c.o.d"
  "/work/wt-place/src/ctl/history.c" "src/ctl/CMakeFiles/gpctl.dir/history.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/history.c.o.d"
  "/work/wt-place/src/ctl/idle.c" "src/ctl/CMakeFiles/gpctl.dir/idle.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/idle.c.o.d"
  "/work/wt-place/src/ctl/jobs.c" "src/ctl/CMakeFiles/gpctl.dir/jobs.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/jobs.c.o.d"
  "/work/wt-place/src/ctl/leader.c" "src/ctl/CMakeFiles/gpctl.dir/leader.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/leader.c.o.d"
  "/work/wt-place/src/ctl/load.c" "src/ctl/CMakeFiles/gpctl.dir/load.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/load.c.o.d"
  "/work/wt-place/src/ctl/meter.c" "src/ctl/CMakeFiles/gpctl.dir/meter.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/meter.c.o.d"
  "/work/wt-place/src/ctl/metrics.c" "src/ctl/CMakeFiles/gpctl.dir/metrics.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/metrics.c.o.d"
  "/work/wt-place/src/ctl/node.c" "src/ctl/CMakeFiles/gpctl.dir/node.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/node.c.o.d"
  "/work/wt-place/src/ctl/node_images.c" "src/ctl/CMakeFiles/gpctl.dir/node_images.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/node_images.c.o.d"
  "/work/wt-place/src/ctl/node_mig.c" "src/ctl/CMakeFiles/gpctl.dir/node_mig.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/node_mig.c.o.d"
  "/work/wt-place/src/ctl/node_taints.c" "src/ctl/CMakeFiles/gpctl.dir/node_taints.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/node_taints.c.o.d"
  "/work/wt-place/src/ctl/notify.c" "src/ctl/CMakeFiles/gpctl.dir/notify.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/notify.c.o.d"
  "/work/wt-place/src/ctl/objects.c" "src/ctl/CMakeFiles/gpctl.dir/objects.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/objects.c.o.d"
  "/work/wt-place/src/ctl/openapi.c" "src/ctl/CMakeFiles/gpctl.dir/openapi.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/openapi.c.o.d"
  "/work/wt-place/build-rel/src/ctl/openapi_doc.c" "src/ctl/CMakeFiles/gpctl.dir/openapi_doc.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/openapi_doc.c.o.d"
  "/work/wt-place/src/ctl/prices.c" "src/ctl/CMakeFiles/gpctl.dir/prices.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/prices.c.o.d"
  "/work/wt-place/src/ctl/proxy.c" "src/ctl/CMakeFiles/gpctl.dir/proxy.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/proxy.c.o.d"
  "/work/wt-place/src/ctl/proxy_http.c" "src/ctl/CMakeFiles/gpctl.dir/proxy_http.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/proxy_http.c.o.d"
  "/work/wt-place/src/ctl/proxy_pass.c" "src/ctl/CMakeFiles/gpctl.dir/proxy_pass.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/proxy_pass.c.o.d"
  "/work/wt-place/src/ctl/proxy_pool.c" "src/ctl/CMakeFiles/gpctl.dir/proxy_pool.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/proxy_pool.c.o.d"
  "/work/wt-place/src/ctl/proxy_state.c" "src/ctl/CMakeFiles/gpctl.dir/proxy_state.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/proxy_state.c.o.d"
  "/work/wt-place/src/ctl/pull.c" "src/ctl/CMakeFiles/gpctl.dir/pull.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/pull.c.o.d"
  "/work/wt-place/src/ctl/ratelimit.c" "src/ctl/CMakeFiles/gpctl.dir/ratelimit.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/ratelimit.c.o.d"
  "/work/wt-place/src/ctl/recovery.c" "src/ctl/CMakeFiles/gpctl.dir/recovery.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/recovery.c.o.d"
  "/work/wt-place/src/ctl/registries.c" "src/ctl/CMakeFiles/gpctl.dir/registries.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/registries.c.o.d"
  "/work/wt-place/src/ctl/router.c" "src/ctl/CMakeFiles/gpctl.dir/router.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/router.c.o.d"
  "/work/wt-place/src/ctl/schedloop.c" "src/ctl/CMakeFiles/gpctl.dir/schedloop.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/schedloop.c.o.d"
  "/work/wt-place/src/ctl/secrets.c" "src/ctl/CMakeFiles/gpctl.dir/secrets.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/secrets.c.o.d"
  "/work/wt-place/src/ctl/service.c" "src/ctl/CMakeFiles/gpctl.dir/service.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/service.c.o.d"
  "/work/wt-place/src/ctl/service_tick.c" "src/ctl/CMakeFiles/gpctl.dir/service_tick.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/service_tick.c.o.d"
  "/work/wt-place/src/ctl/startup.c" "src/ctl/CMakeFiles/gpctl.dir/startup.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/startup.c.o.d"
  "/work/wt-place/src/ctl/state.c" "src/ctl/CMakeFiles/gpctl.dir/state.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/state.c.o.d"
  "/work/wt-place/src/ctl/txn.c" "src/ctl/CMakeFiles/gpctl.dir/txn.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/txn.c.o.d"
  "/work/wt-place/src/ctl/volumes.c" "src/ctl/CMakeFiles/gpctl.dir/volumes.c.o" "gcc" "src/ctl/CMakeFiles/gpctl.dir/volumes.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/ctl/CMakeFiles/gpctlconfig.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/store/CMakeFiles/gpstore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpnet.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/net/CMakeFiles/gpusagedoc.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/core/CMakeFiles/gpcore.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpbase.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gpprocstat.dir/DependInfo.cmake"
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
