CMakeFiles/spaa_config.dir/config/config.c.o: /work/main/config/config.c \
 /usr/include/stdc-predef.h
