file(REMOVE_RECURSE
  "CMakeFiles/spaa_codecs.dir/codecs/buf.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/buf.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/canon.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/canon.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/cid.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/cid.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/convert.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/convert.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/err.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/err.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/idmap.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/idmap.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/normalize.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/normalize.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa_read.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa_read.c.o.d"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa_write.c.o"
  "CMakeFiles/spaa_codecs.dir/codecs/spaa_write.c.o.d"
  "libspaa_codecs.a"
  "libspaa_codecs.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/spaa_codecs.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
