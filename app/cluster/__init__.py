"""The controller binary on a live cluster: the reconcile loop on wall time with workers, its
probes and metrics. ``main`` is its composition root.
"""
