"""Admission's refusal as an exception, apart from the admission step that raises it.

Every command catches it in one place (``app/cli/commands.py``), including the commands that
never admit anything; keeping it here lets those import it without the validation rules, the
lifecycle machines and the models behind ``core/admission.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from katib_resume.core.validation import Decision


class Denied(Exception):
    """Admission refused the Experiment: ``str()`` is Katib's message, ``decision`` the rest."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.message)
        self.decision = decision
