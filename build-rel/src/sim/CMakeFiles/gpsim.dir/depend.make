# Empty dependencies file for gpsim.
# This may be replaced when dependencies are built.
