"""Reading an engine tree fast: which files can matter (grep, byte pre-filter), the statement cut,
worker processes and the content cache. Nothing here judges an arch."""
