"""The ``katib-resume`` command line: parsing, dispatch, and the embedded commands (``run``,
``get``, ``describe``, ``edit``, ``delete``, ``demo``, ``plan``).
"""
