file(REMOVE_RECURSE
  "../../lib/libgpstore.a"
)
