"""PV names collide (bug 6); ownership tells the owners apart, and nobody adopts another's PV.

``<experiment>-<algorithm>-<namespace>`` is ambiguous: ``a`` + ``b-random`` + ``c`` and
``a-b`` + ``random`` + ``c`` give the same name. Katib adopts whatever PV it finds. Here two
admitted Experiments whose PV names collide are generated; the first one's PV carries its owner's
UID, and the second one's plan reports a conflict instead of mounting it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from katib_resume.core.config import KatibConfig, parse_katib_config
from katib_resume.core.defaults import default_experiment
from katib_resume.core.model import Experiment, PersistentVolume, Suggestion
from katib_resume.core.names import pv_name
from katib_resume.core.validation import validate
from katib_resume.core.volumes import volume_conflict, volume_plan
from tests.support.harness import load

segment = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)


@st.composite
def colliding(draw: st.DrawFn) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """Two distinct (experiment, algorithm, namespace) triples with the same PV name."""
    parts = draw(st.lists(segment, min_size=4, max_size=7))
    cuts = st.lists(st.integers(1, len(parts) - 1), min_size=2, max_size=2, unique=True)
    first, second = draw(cuts), draw(cuts)
    assume(sorted(first) != sorted(second))
    return _split(parts, sorted(first)), _split(parts, sorted(second))


def _split(parts: list[str], cuts: list[int]) -> tuple[str, str, str]:
    a, b = cuts
    return "-".join(parts[:a]), "-".join(parts[a:b]), "-".join(parts[b:])


def config_for(*algorithms: str) -> KatibConfig:
    pv = {"hostPath": {"path": "/srv/katib"}, "capacity": {"storage": "1Gi"}}
    entries = [
        {"algorithmName": name, "image": "img", "persistentVolumeSpec": pv} for name in algorithms
    ]
    return parse_katib_config(
        {
            "apiVersion": "config.kubeflow.org/v1beta1",
            "kind": "KatibConfig",
            "runtime": {"suggestions": entries},
        }
    )


def suggestion(triple: tuple[str, str, str], uid: str) -> Suggestion:
    name, algorithm, namespace = triple
    return Suggestion.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "spec": {"algorithm": {"algorithmName": algorithm}, "resumePolicy": "FromVolume"},
        }
    )


def experiment(triple: tuple[str, str, str]) -> Experiment:
    name, algorithm, namespace = triple
    data: dict[str, Any] = load("from-volume-resume.yaml")  # admitted as it is, once defaulted
    data["metadata"] = {"name": name, "namespace": namespace}
    data["spec"]["algorithm"] = {"algorithmName": algorithm}
    return default_experiment(Experiment.model_validate(data))


@given(colliding())
def test_colliding_pv_names_are_told_apart_by_ownership(
    pair: tuple[tuple[str, str, str], tuple[str, str, str]],
) -> None:
    first, second = pair
    assert pv_name(*first) == pv_name(*second) and first != second
    config = config_for(first[1], second[1])
    admitted = [validate(experiment(t), catalog=config).allowed for t in pair]
    assume(all(admitted))
    owner, other = suggestion(first, "uid-first"), suggestion(second, "uid-second")
    created = volume_plan(owner, config.suggestion(first[1])).volume
    assert created is not None
    pv = PersistentVolume.model_validate(created.manifest())
    assert volume_conflict(volume_plan(owner, config.suggestion(first[1])), pv, "uid-first") is None
    conflict = volume_conflict(volume_plan(other, config.suggestion(second[1])), pv, "uid-second")
    assert conflict is not None and pv.metadata.name in conflict
