"""Shared test set-up: Hypothesis profiles.

``ci`` (selected by ``HYPOTHESIS_PROFILE=ci``, which ``.ci/run`` sets) is derandomized and keeps
no example database, so two CI runs explore exactly the same examples. ``dev`` is the default for
local runs: random, with the example database, for finding new counterexamples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
