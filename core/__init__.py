"""katib-resume's domain core: Katib's resume-Experiment lifecycle as pure, typed decisions.

No I/O, no clock reads, no ``kubernetes`` import: the shell gathers an ``Observed`` snapshot,
``plan`` decides, and the shell applies the returned actions. This package is the public surface
an embedding scheduler imports.
"""
