"""Katib's own CRDs, served as Katib ships them, with the status subresource made certain.

The three files in ``app/data/`` are byte copies of Katib's (``../shared/katib-reference``, commit
in its README): installing katib-resume must not change the resources Katib's SDK, UI and trial
controller read. The one thing we rely on that a CRD could lack is the status subresource: the
controller writes status through ``/status`` with a ``resourceVersion`` precondition, and without
the subresource the API server would take status from ordinary updates and ignore ``/status``.
Katib's files already enable it, so today this only guarantees it.
"""

from __future__ import annotations

import copy
import functools
from importlib import resources

import yaml

from katib_resume.core.manifest import Manifest

FILES = ("crd-experiment.yaml", "crd-suggestion.yaml", "crd-trial.yaml")


def katib_crds() -> list[Manifest]:
    """Experiment, Suggestion and Trial, in that order, each with a status subresource."""
    return [with_status_subresource(_load(name)) for name in FILES]


def with_status_subresource(crd: Manifest) -> Manifest:
    """A copy of ``crd`` in which every version has ``subresources.status`` (kept if present)."""
    found = copy.deepcopy(crd)
    for version in found["spec"]["versions"]:
        version.setdefault("subresources", {}).setdefault("status", {})
    return found


@functools.cache
def _load(name: str) -> Manifest:
    """Parsed once per process; callers get copies (``with_status_subresource``)."""
    text = resources.files("katib_resume.app").joinpath("data", name).read_text("utf-8")
    document: Manifest = yaml.safe_load(text)
    return document
