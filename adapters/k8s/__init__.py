"""The Kubernetes adapter: the cluster port on a real API server.

This is the only package that imports ``kubernetes`` (import-linter enforces it), and the only
place where HTTP answers become the port's errors (``errors``). ``connect`` loads credentials;
``Transport`` sends JSON with timeouts and retries; ``KubeCluster`` keeps a watch-fed cache
(``store``, ``watch``) and writes merge patches guarded by ``resourceVersion`` (``patches``);
``ConfigMapSource`` is the config port on the katib-config ConfigMap; ``LeaseElector`` is
leader election on a ``coordination.k8s.io`` Lease.
"""

import logging

# A library's loggers stay silent until the program configures logging (app.logs does).
logging.getLogger("katib_resume").addHandler(logging.NullHandler())
