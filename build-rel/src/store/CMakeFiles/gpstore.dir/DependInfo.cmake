
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt-place/src/store/pg_jobs.c" "src/store/CMakeFiles/gpstore.dir/pg_jobs.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_jobs.c.o.d"
  "/work/wt-place/src/store/pg_lease.c" "src/store/CMakeFiles/gpstore.dir/pg_lease.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_lease.c.o.d"
  "/work/wt-place/src/store/pg_ledger.c" "src/store/CMakeFiles/gpstore.dir/pg_ledger.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_ledger.c.o.d"
  "/work/wt-place/src/store/pg_objects.c" "src/store/CMakeFiles/gpstore.dir/pg_objects.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_objects.c.o.d"
  "/work/wt-place/src/store/pg_schema.c" "src/store/CMakeFiles/gpstore.dir/pg_schema.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_schema.c.o.d"
  "/work/wt-place/src/store/pg_store.c" "src/store/CMakeFiles/gpstore.dir/pg_store.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/pg_store.c.o.d"
  "/work/wt-place/src/store/sqlite_audit.c" "src/store/CMakeFiles/gpstore.dir/sqlite_audit.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_audit.c.o.d"
  "/work/wt-place/src/store/sqlite_jobs.c" "src/store/CMakeFiles/gpstore.dir/sqlite_jobs.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_jobs.c.o.d"
  "/work/wt-place/src/store/sqlite_lease.c" "src/store/CMakeFiles/gpstore.dir/sqlite_lease.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_lease.c.o.d"
  "/work/wt-place/src/store/sqlite_objects.c" "src/store/CMakeFiles/gpstore.dir/sqlite_objects.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_objects.c.o.d"
  "/work/wt-place/src/store/sqlite_registry.c" "src/store/CMakeFiles/gpstore.dir/sqlite_registry.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_registry.c.o.d"
  "/work/wt-place/src/store/sqlite_store.c" "src/store/CMakeFiles/gpstore.dir/sqlite_store.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_store.c.o.d"
  "/work/wt-place/src/store/sqlite_usage.c" "src/store/CMakeFiles/gpstore.dir/sqlite_usage.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/sqlite_usage.c.o.d"
  "/work/wt-place/src/store/store.c" "src/store/CMakeFiles/gpstore.dir/store.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/store.c.o.d"
  "/work/wt-place/src/store/store_fault.c" "src/store/CMakeFiles/gpstore.dir/store_fault.c.o" "gcc" "src/store/CMakeFiles/gpstore.dir/store_fault.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt-place/build-rel/src/base/CMakeFiles/gperror.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
