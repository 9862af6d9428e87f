"""No two admitted Experiments ever share a hostPath directory in the local volume mode.

The directory of a local PV is ``<prefix>/<experiment>-<algorithm>-<namespace>``, and that join
is ambiguous (Katib bug 6: ``a`` with ``random`` in ``b-random-c`` and ``a-random-b`` with
``random`` in ``c`` both make ``a-random-b-random-c``). What keeps two live Experiments apart is
admission's stale-PV check (docs/katib-contract.md#stale-pv-check) against the PVs that exist. Here
Experiments built from a few tokens, so that joins collide often, are created and deleted in
sequence; each create goes through ``validate`` with the PVs of the live Experiments, and each
admitted FromVolume Experiment gets the directory the controller's own volume plan gives it.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import event, example, given
from hypothesis import strategies as st

from katib_resume.core.config import KatibConfig, parse_katib_config
from katib_resume.core.defaults import default_experiment
from katib_resume.core.desired import desired_suggestion
from katib_resume.core.local_volumes import with_local_volumes
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.validation import validate
from katib_resume.core.volumes import volume_plan
from tests.support.harness import load

TOKENS = ("a", "b", "c", "random", "grid")
ALGORITHMS = ("random", "grid")
PREFIXES = ("/tmp/katib/suggestions", "/srv/katib/", "/")
POLICIES = ("FromVolume", "FromVolume", "LongRunning", "Never")
Op = tuple[Any, ...]

joined = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3).map("-".join)
independent = st.tuples(
    st.just("create"), joined, joined, st.sampled_from(ALGORITHMS), st.sampled_from(POLICIES)
)
delete = st.tuples(st.just("delete"), st.integers(0, 20))


@st.composite
def ambiguous_joins(draw: st.DrawFn) -> list[str]:
    """``<s>-<alg>-<s>-<alg>-<s>``: two ways to read it as ``<name>-<algorithm>-<namespace>``."""
    segment = st.lists(st.sampled_from(("a", "b", "c")), min_size=1, max_size=2)
    first, second = draw(st.sampled_from(ALGORITHMS)), draw(st.sampled_from(ALGORITHMS))
    return [*draw(segment), first, *draw(segment), second, *draw(segment)]


@st.composite
def splits(draw: st.DrawFn, joins: list[list[str]]) -> Op:
    """A create whose ``<name>-<algorithm>-<namespace>`` is one of a few shared joins."""
    words = draw(st.sampled_from(joins))
    at = draw(st.sampled_from([i for i in range(1, len(words) - 1) if words[i] in ALGORITHMS]))
    name, namespace = "-".join(words[:at]), "-".join(words[at + 1 :])
    return ("create", name, namespace, words[at], draw(st.sampled_from(POLICIES)))


@st.composite
def sequences(draw: st.DrawFn) -> list[Op]:
    """Creates and deletes; most creates split a few shared joins, so PV names collide."""
    joins = draw(st.lists(ambiguous_joins(), min_size=1, max_size=3))
    ops = st.one_of(splits(joins), splits(joins), independent, delete)
    return draw(st.lists(ops, min_size=2, max_size=25))


@functools.cache
def config(prefix: str) -> KatibConfig:
    data = with_local_volumes(load("katib-config.yaml"))
    for entry in data["runtime"]["suggestions"]:
        entry["localVolumePathPrefix"] = prefix
    return parse_katib_config(data)


def experiment(name: str, namespace: str, algorithm: str, policy: str) -> Experiment:
    raw = load("from-volume-resume.yaml")
    raw["metadata"].update(name=name, namespace=namespace, uid=f"uid-{namespace}-{name}")
    raw["spec"]["algorithm"]["algorithmName"] = algorithm
    raw["spec"]["resumePolicy"] = policy
    return Experiment.model_validate(raw)


def directory(exp: Experiment, katib: KatibConfig) -> tuple[str, str]:
    """The PV name and hostPath the controller's volume plan gives ``exp``'s Suggestion."""
    suggestion = Suggestion.model_validate(desired_suggestion(default_experiment(exp), 0))
    plan = volume_plan(suggestion, katib.suggestion(exp.spec.algorithm.algorithm_name))
    assert plan.volume is not None
    return plan.volume.name, str(plan.volume.manifest()["spec"]["hostPath"]["path"])


def apart(one: str, two: str) -> bool:
    """Neither directory is the other, nor inside it."""
    return one != two and not one.startswith(two + "/") and not two.startswith(one + "/")


@given(prefix=st.sampled_from(PREFIXES), ops=sequences())
@example(
    prefix=PREFIXES[0],
    ops=[
        ("create", "a", "b-random-c", "random", "FromVolume"),
        ("create", "a-random-b", "c", "random", "FromVolume"),  # the same PV name: denied
        ("delete", 0),
        ("create", "a-random-b", "c", "random", "FromVolume"),  # the PV is gone: admitted
    ],
)
def test_admitted_experiments_never_share_a_directory(prefix: str, ops: list[Op]) -> None:
    katib = config(prefix)
    live: dict[tuple[str, str], tuple[str, str] | None] = {}  # (ns, name) -> (pv, directory)
    for op in ops:
        if op[0] == "delete":
            if live:
                del live[sorted(live)[op[1] % len(live)]]  # our finalizer deletes its PV
            continue
        _, name, namespace, algorithm, policy = op
        if (namespace, name) in live:
            continue  # the API server refuses a second object of that name
        exp = experiment(name, namespace, algorithm, policy)
        existing = {volume[0] for volume in live.values() if volume is not None}
        decision = validate(exp, catalog=katib, existing_pvs=existing)
        if not decision.allowed:
            event("denied: " + decision.message.split(",")[0].split(":")[0])
            continue
        if policy != "FromVolume":
            live[(namespace, name)] = None
            continue
        pv, path = directory(exp, katib)
        assert path == f"{prefix.rstrip('/')}/{pv}"
        for other in live.values():
            if other is not None:
                assert apart(path, other[1]), (path, other[1])
        live[(namespace, name)] = (pv, path)
