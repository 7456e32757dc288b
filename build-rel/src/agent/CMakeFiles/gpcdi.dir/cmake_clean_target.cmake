file(REMOVE_RECURSE
  "../../lib/libgpcdi.a"
)
