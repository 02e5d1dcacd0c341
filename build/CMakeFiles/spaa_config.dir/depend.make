# Empty dependencies file for spaa_config.
# This may be replaced when dependencies are built.
