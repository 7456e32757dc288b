file(REMOVE_RECURSE
  "../../lib/libgpprocstat.a"
)
