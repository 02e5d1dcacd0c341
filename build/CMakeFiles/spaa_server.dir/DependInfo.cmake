
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/server/cli.c" "CMakeFiles/spaa_server.dir/server/cli.c.o" "gcc" "CMakeFiles/spaa_server.dir/server/cli.c.o.d"
  "/work/main/server/cmd_convert.c" "CMakeFiles/spaa_server.dir/server/cmd_convert.c.o" "gcc" "CMakeFiles/spaa_server.dir/server/cmd_convert.c.o.d"
  "/work/main/server/cmd_serve.c" "CMakeFiles/spaa_server.dir/server/cmd_serve.c.o" "gcc" "CMakeFiles/spaa_server.dir/server/cmd_serve.c.o.d"
  "/work/main/server/cmd_validate.c" "CMakeFiles/spaa_server.dir/server/cmd_validate.c.o" "gcc" "CMakeFiles/spaa_server.dir/server/cmd_validate.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build/CMakeFiles/spaa_storage.dir/DependInfo.cmake"
  "/work/main/build/CMakeFiles/spaa_config.dir/DependInfo.cmake"
  "/work/main/build/CMakeFiles/spaa_codecs.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
