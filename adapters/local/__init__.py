"""In-process stand-ins for the pods Katib runs, for the embedded runtime (no cluster needed).

- ``adapters.local.trials``: runs a Trial's program and reports how it ended, in Katib's words
  (the metrics its StdOut collector would read, the conditions its trial controller would set).
- ``adapters.local.suggestion``: the suggestion service (the search algorithm) that Katib deploys
  as a Deployment; here it runs in the embedding process and keeps its state in a directory that
  plays the part of the ``FromVolume`` PVC, so a restarted Experiment resumes its search.

These adapters build on ``core`` only: they never import ``adapters.fake``, ``adapters.k8s`` or
``app``.
"""
