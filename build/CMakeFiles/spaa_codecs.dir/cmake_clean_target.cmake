file(REMOVE_RECURSE
  "libspaa_codecs.a"
)
