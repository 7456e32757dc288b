file(REMOVE_RECURSE
  "../bin/test_ctl_txn_faults"
  "../bin/test_ctl_txn_faults.pdb"
  "CMakeFiles/test_ctl_txn_faults.dir/unit/test_ctl_txn_faults.c.o"
  "CMakeFiles/test_ctl_txn_faults.dir/unit/test_ctl_txn_faults.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ctl_txn_faults.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
