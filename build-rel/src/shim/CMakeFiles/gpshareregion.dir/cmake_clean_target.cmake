file(REMOVE_RECURSE
  "../../lib/libgpshareregion.a"
)
