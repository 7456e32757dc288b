file(REMOVE_RECURSE
  "../bin/test_cgroup_owner"
  "../bin/test_cgroup_owner.pdb"
  "CMakeFiles/test_cgroup_owner.dir/unit/test_cgroup_owner.c.o"
  "CMakeFiles/test_cgroup_owner.dir/unit/test_cgroup_owner.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cgroup_owner.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
