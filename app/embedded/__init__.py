"""The embedded runtime: the reconcile loop, Kubernetes' own controllers and the local services
on the fake cluster kept in a state directory. ``bootstrap`` is its composition root.
"""
