file(REMOVE_RECURSE
  "../../lib/libgprun.a"
)
