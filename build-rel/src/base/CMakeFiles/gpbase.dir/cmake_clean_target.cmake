file(REMOVE_RECURSE
  "../../lib/libgpbase.a"
)
