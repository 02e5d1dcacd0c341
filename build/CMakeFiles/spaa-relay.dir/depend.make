# Empty dependencies file for spaa-relay.
# This may be replaced when dependencies are built.
