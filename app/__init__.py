"""The shell around the core, grouped by role, each group a package:

- ``cli``: the ``katib-resume`` command line and the embedded commands;
- ``embedded``: the runtime on the fake cluster of a state directory (``embedded.bootstrap``);
- ``cluster``: the controller binary on a live cluster (``cluster.main`` wires it);
- ``webhook``: the admission webhook binary (``webhook.main`` wires it);
- ``manifests``: the install's YAML, generated;
- ``loop``: the reconcile loop both runtimes share;
- ``common``: reading inputs, printing, logging, shared names.

import-linter keeps them layered in that order (``cli`` on top, ``common`` at the bottom).
"""
