CMakeFiles/spaa_storage.dir/storage/storage.c.o: \
 /work/main/storage/storage.c /usr/include/stdc-predef.h
