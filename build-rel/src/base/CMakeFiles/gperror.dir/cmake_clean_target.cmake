file(REMOVE_RECURSE
  "../../lib/libgperror.a"
)
