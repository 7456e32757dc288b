file(REMOVE_RECURSE
  "../../lib/libgpctl.a"
)
