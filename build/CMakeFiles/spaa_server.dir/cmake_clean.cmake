file(REMOVE_RECURSE
  "CMakeFiles/spaa_server.dir/server/cli.c.o"
  "CMakeFiles/spaa_server.dir/server/cli.c.o.d"
  "CMakeFiles/spaa_server.dir/server/cmd_convert.c.o"
  "CMakeFiles/spaa_server.dir/server/cmd_convert.c.o.d"
  "CMakeFiles/spaa_server.dir/server/cmd_serve.c.o"
  "CMakeFiles/spaa_server.dir/server/cmd_serve.c.o.d"
  "CMakeFiles/spaa_server.dir/server/cmd_validate.c.o"
  "CMakeFiles/spaa_server.dir/server/cmd_validate.c.o.d"
  "libspaa_server.a"
  "libspaa_server.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/spaa_server.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
