file(REMOVE_RECURSE
  "../../lib/libgpsim.a"
)
