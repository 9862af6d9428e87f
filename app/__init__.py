"""The shell around the core: the command line, the reconcile loop and the composition root."""
