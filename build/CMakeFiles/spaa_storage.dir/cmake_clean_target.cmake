file(REMOVE_RECURSE
  "libspaa_storage.a"
)
