file(REMOVE_RECURSE
  "libspaa_server.a"
)
