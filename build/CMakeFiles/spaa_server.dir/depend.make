# Empty dependencies file for spaa_server.
# This may be replaced when dependencies are built.
