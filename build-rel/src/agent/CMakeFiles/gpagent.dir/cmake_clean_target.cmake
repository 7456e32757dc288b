file(REMOVE_RECURSE
  "../../lib/libgpagent.a"
)
