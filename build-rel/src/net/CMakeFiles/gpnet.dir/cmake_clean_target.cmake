file(REMOVE_RECURSE
  "../../lib/libgpnet.a"
)
