
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/codecs/buf.c" "CMakeFiles/spaa_codecs.dir/codecs/buf.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/buf.c.o.d"
  "/work/main/codecs/canon.c" "CMakeFiles/spaa_codecs.dir/codecs/canon.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/canon.c.o.d"
  "/work/main/codecs/cid.c" "CMakeFiles/spaa_codecs.dir/codecs/cid.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/cid.c.o.d"
  "/work/main/codecs/convert.c" "CMakeFiles/spaa_codecs.dir/codecs/convert.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/convert.c.o.d"
  "/work/main/codecs/err.c" "CMakeFiles/spaa_codecs.dir/codecs/err.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/err.c.o.d"
  "/work/main/codecs/idmap.c" "CMakeFiles/spaa_codecs.dir/codecs/idmap.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/idmap.c.o.d"
  "/work/main/codecs/normalize.c" "CMakeFiles/spaa_codecs.dir/codecs/normalize.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/normalize.c.o.d"
  "/work/main/codecs/spaa.c" "CMakeFiles/spaa_codecs.dir/codecs/spaa.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/spaa.c.o.d"
  "/work/main/codecs/spaa_read.c" "CMakeFiles/spaa_codecs.dir/codecs/spaa_read.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/spaa_read.c.o.d"
  "/work/main/codecs/spaa_write.c" "CMakeFiles/spaa_codecs.dir/codecs/spaa_write.c.o" "gcc" "CMakeFiles/spaa_codecs.dir/codecs/spaa_write.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
