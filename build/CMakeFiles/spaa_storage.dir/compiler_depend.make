# Empty compiler generated dependencies file for spaa_storage.
# This may be replaced when dependencies are built.
