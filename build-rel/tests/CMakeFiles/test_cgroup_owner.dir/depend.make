# Empty dependencies file for test_cgroup_owner.
# This may be replaced when dependencies are built.
