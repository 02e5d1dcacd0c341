file(REMOVE_RECURSE
  "CMakeFiles/spaa_storage.dir/storage/storage.c.o"
  "CMakeFiles/spaa_storage.dir/storage/storage.c.o.d"
  "libspaa_storage.a"
  "libspaa_storage.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/spaa_storage.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
