file(REMOVE_RECURSE
  "../../lib/libgpcore.a"
)
