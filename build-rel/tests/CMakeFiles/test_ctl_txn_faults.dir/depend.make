# Empty dependencies file for test_ctl_txn_faults.
# This may be replaced when dependencies are built.
