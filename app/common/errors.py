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


class Busy(InputError):
    """The state directory is locked by another command (exit status 2 where it is not handed
    over to that command: ``app/cli/handover.py``)."""

    def __init__(self, state_dir: object) -> None:
        super().__init__(f"{state_dir}: another katib-resume command is using it")
        self.state_dir = state_dir
