file(REMOVE_RECURSE
  "../../lib/libgpstore.a"
  "../../lib/libgpstore.pdb"
  "CMakeFiles/gpstore.dir/pg_jobs.c.o"
  "CMakeFiles/gpstore.dir/pg_jobs.c.o.d"
  "CMakeFiles/gpstore.dir/pg_lease.c.o"
  "CMakeFiles/gpstore.dir/pg_lease.c.o.d"
  "CMakeFiles/gpstore.dir/pg_ledger.c.o"
  "CMakeFiles/gpstore.dir/pg_ledger.c.o.d"
  "CMakeFiles/gpstore.dir/pg_objects.c.o"
  "CMakeFiles/gpstore.dir/pg_objects.c.o.d"
  "CMakeFiles/gpstore.dir/pg_schema.c.o"
  "CMakeFiles/gpstore.dir/pg_schema.c.o.d"
  "CMakeFiles/gpstore.dir/pg_store.c.o"
  "CMakeFiles/gpstore.dir/pg_store.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_audit.c.o"
  "CMakeFiles/gpstore.dir/sqlite_audit.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_jobs.c.o"
  "CMakeFiles/gpstore.dir/sqlite_jobs.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_lease.c.o"
  "CMakeFiles/gpstore.dir/sqlite_lease.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_objects.c.o"
  "CMakeFiles/gpstore.dir/sqlite_objects.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_registry.c.o"
  "CMakeFiles/gpstore.dir/sqlite_registry.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_store.c.o"
  "CMakeFiles/gpstore.dir/sqlite_store.c.o.d"
  "CMakeFiles/gpstore.dir/sqlite_usage.c.o"
  "CMakeFiles/gpstore.dir/sqlite_usage.c.o.d"
  "CMakeFiles/gpstore.dir/store.c.o"
  "CMakeFiles/gpstore.dir/store.c.o.d"
  "CMakeFiles/gpstore.dir/store_fault.c.o"
  "CMakeFiles/gpstore.dir/store_fault.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpstore.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
