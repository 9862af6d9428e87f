"""What a command refuses to do, by kind: each kind is one exit status (``app/cli/main.py``).

Apart from the readers that raise them (``app/common/inputs.py``: YAML, the models, katib-config)
because every command catches them, and most commands never read a file.
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input from the user: the message is the whole story (exit status 2)."""


class RequestError(InputError):
    """A request kubectl would refuse with exit status 1: a selector or an output template that
    does not parse (scripts written for kubectl test for 1, not for our 2)."""


class NotFoundError(RequestError):
    """The object asked for does not exist: kubectl's ``Error from server (NotFound): ...``
    line, printed as it is, exit status 1."""
