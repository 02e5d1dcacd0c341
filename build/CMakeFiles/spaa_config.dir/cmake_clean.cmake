file(REMOVE_RECURSE
  "CMakeFiles/spaa_config.dir/config/config.c.o"
  "CMakeFiles/spaa_config.dir/config/config.c.o.d"
  "libspaa_config.a"
  "libspaa_config.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/spaa_config.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
