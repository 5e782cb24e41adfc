"""`capgap scan`: find where a target's source, binaries or tuned configs lack an arch."""
