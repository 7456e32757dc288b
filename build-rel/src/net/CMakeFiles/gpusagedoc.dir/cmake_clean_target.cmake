file(REMOVE_RECURSE
  "../../lib/libgpusagedoc.a"
)
