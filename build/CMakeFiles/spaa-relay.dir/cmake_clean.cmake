file(REMOVE_RECURSE
  "CMakeFiles/spaa-relay.dir/server/main.c.o"
  "CMakeFiles/spaa-relay.dir/server/main.c.o.d"
  "spaa-relay"
  "spaa-relay.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/spaa-relay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
