file(REMOVE_RECURSE
  "../../lib/libgpctlconfig.a"
)
