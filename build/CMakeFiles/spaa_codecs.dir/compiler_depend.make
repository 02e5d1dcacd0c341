# Empty compiler generated dependencies file for spaa_codecs.
# This may be replaced when dependencies are built.
