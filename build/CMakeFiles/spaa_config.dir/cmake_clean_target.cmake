file(REMOVE_RECURSE
  "libspaa_config.a"
)
